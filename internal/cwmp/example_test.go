package cwmp_test

import (
	"errors"
	"fmt"

	"cpesuite/internal/cwmp"
)

// An ACS reads the CPE's POST body, answers an Inform in the CPE's own cwmp
// version with the same cwmp:ID, and answers an RPC it does not know with
// fault 8000.
func Example_acs() {
	body := []byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:cwmp="urn:dslforum-org:cwmp-1-2">
  <soapenv:Header><cwmp:ID soapenv:mustUnderstand="1">42</cwmp:ID></soapenv:Header>
  <soapenv:Body><cwmp:Inform>
    <DeviceId><Manufacturer>ACME</Manufacturer><OUI>00D09E</OUI><ProductClass>IGD</ProductClass><SerialNumber>SN1</SerialNumber></DeviceId>
    <Event><EventStruct><EventCode>1 BOOT</EventCode><CommandKey></CommandKey></EventStruct></Event>
    <MaxEnvelopes>1</MaxEnvelopes><CurrentTime>2024-05-17T09:30:12Z</CurrentTime><RetryCount>0</RetryCount>
    <ParameterList><ParameterValueStruct><Name>Device.DeviceInfo.SoftwareVersion</Name><Value>1.0</Value></ParameterValueStruct></ParameterList>
  </cwmp:Inform></soapenv:Body>
</soapenv:Envelope>`)

	env, err := cwmp.Decode(body)
	var unknown *cwmp.UnknownMethodError
	switch {
	case errors.Is(err, cwmp.ErrEmpty):
		fmt.Println("empty POST: the CPE has nothing more to send")
		return
	case errors.As(err, &unknown):
		out, _ := cwmp.Encode(env.Reply(cwmp.NewFault(cwmp.FaultMethodNotSupported, "")))
		fmt.Printf("%d bytes of fault 8000\n", len(out))
		return
	case err != nil:
		fmt.Println("bad request:", err)
		return
	}

	switch m := env.Body.(type) {
	case *cwmp.Inform:
		fmt.Println(m.DeviceID.SerialNumber, m.Event[0].EventCode, m.ParameterList[0].Value)
		reply, _ := cwmp.Encode(env.Reply(&cwmp.InformResponse{MaxEnvelopes: 1}))
		back, _ := cwmp.Decode(reply)
		fmt.Println(back.Version, back.ID, back.Body.Method())
	}
	// Output:
	// SN1 1 BOOT 1.0
	// cwmp-1-2 42 InformResponse
}
