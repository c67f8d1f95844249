package cwmp

import (
	"encoding/xml"
	"os"
	"testing"
	"time"
)

// The baseline: encoding/xml into structs equivalent to Envelope and Inform
// for the same 25-parameter Inform. Tags use local names only, the same
// vendor-prefix tolerance as Decode; the baseline's output lacks the prefixes
// and namespace declarations Encode writes, which if anything flatters it.
type xmlEnvelope struct {
	XMLName xml.Name  `xml:"Envelope"`
	Header  xmlHeader `xml:"Header"`
	Body    xmlBody   `xml:"Body"`
}

type xmlHeader struct {
	ID xmlID `xml:"ID"`
}

type xmlID struct {
	MustUnderstand string `xml:"mustUnderstand,attr"`
	Text           string `xml:",chardata"`
}

type xmlBody struct {
	Inform *xmlInform `xml:"Inform"`
}

type xmlInform struct {
	DeviceID      xmlDeviceID  `xml:"DeviceId"`
	Event         xmlEventList `xml:"Event"`
	MaxEnvelopes  uint32       `xml:"MaxEnvelopes"`
	CurrentTime   time.Time    `xml:"CurrentTime"`
	RetryCount    uint32       `xml:"RetryCount"`
	ParameterList xmlParamList `xml:"ParameterList"`
}

type xmlDeviceID struct {
	Manufacturer string `xml:"Manufacturer"`
	OUI          string `xml:"OUI"`
	ProductClass string `xml:"ProductClass"`
	SerialNumber string `xml:"SerialNumber"`
}

type xmlEventList struct {
	ArrayType string     `xml:"arrayType,attr"`
	Items     []xmlEvent `xml:"EventStruct"`
}

type xmlEvent struct {
	EventCode  string `xml:"EventCode"`
	CommandKey string `xml:"CommandKey"`
}

type xmlParamList struct {
	ArrayType string     `xml:"arrayType,attr"`
	Items     []xmlParam `xml:"ParameterValueStruct"`
}

type xmlParam struct {
	Name  string   `xml:"Name"`
	Value xmlValue `xml:"Value"`
}

type xmlValue struct {
	Type string `xml:"type,attr"`
	Text string `xml:",chardata"`
}

func benchInput(b *testing.B) []byte {
	b.Helper()
	data, err := os.ReadFile("testdata/golden/Inform.xml")
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkInformCodec decodes and encodes the 25-parameter Inform of
// testdata/golden/Inform.xml once per operation, with this package and with
// encoding/xml in the same run; the ratio of the two is the figure to quote.
func BenchmarkInformCodec(b *testing.B) {
	data := benchInput(b)
	b.Run("cwmp", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			env, err := Decode(data)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Encode(env); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_xml", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var env xmlEnvelope
			if err := xml.Unmarshal(data, &env); err != nil {
				b.Fatal(err)
			}
			if _, err := xml.Marshal(&env); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInformDecode and BenchmarkInformEncode split the codec figure.
func BenchmarkInformDecode(b *testing.B) {
	data := benchInput(b)
	b.Run("cwmp", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_xml", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var env xmlEnvelope
			if err := xml.Unmarshal(data, &env); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkInformEncode(b *testing.B) {
	data := benchInput(b)
	env, err := Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	var xenv xmlEnvelope
	if err := xml.Unmarshal(data, &xenv); err != nil {
		b.Fatal(err)
	}
	b.Run("cwmp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Encode(env); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cwmp_append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 8192)
		for b.Loop() {
			var err error
			if buf, err = AppendEncode(buf[:0], env); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_xml", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := xml.Marshal(&xenv); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestBaselineDecodesTheSameInform keeps the benchmark honest: the baseline
// must really read all 25 parameters, not skip them on a tag mismatch.
func TestBaselineDecodesTheSameInform(t *testing.T) {
	data, err := os.ReadFile("testdata/golden/Inform.xml")
	if err != nil {
		t.Fatal(err)
	}
	var xenv xmlEnvelope
	if err := xml.Unmarshal(data, &xenv); err != nil {
		t.Fatal(err)
	}
	env, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	in := env.Body.(*Inform)
	x := xenv.Body.Inform
	if x == nil || len(x.ParameterList.Items) != 25 || len(in.ParameterList) != 25 {
		t.Fatalf("want 25 parameters in both decodings, got baseline %v, cwmp %d", x, len(in.ParameterList))
	}
	if len(data) < 5000 || len(data) > 7000 {
		t.Errorf("benchmark Inform is %d bytes, want about 6 KB", len(data))
	}
	for i, p := range in.ParameterList {
		xp := x.ParameterList.Items[i]
		if p.Name != xp.Name || p.Value.Text != xp.Value.Text || p.Value.Type != xp.Value.Type {
			t.Errorf("parameter %d: cwmp %+v, baseline %+v", i, p, xp)
		}
	}
	if xenv.Header.ID.Text != env.ID || x.DeviceID.SerialNumber != in.DeviceID.SerialNumber || !x.CurrentTime.Equal(in.CurrentTime) {
		t.Errorf("header or device differs: baseline %+v %+v", xenv.Header, x.DeviceID)
	}
}
