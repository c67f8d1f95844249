package fccxml_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"cpesuite/internal/fcc/fccxml"
)

// The export streams the campaign header, then each config with its frozen
// fleet in pages.
func ExampleWriter() {
	domain, days, cond := int64(12), 1, int64(4)
	w := fccxml.NewWriter(os.Stdout)
	_ = w.Begin(fccxml.Campaign{Name: "Evening speed", Type: "SPEED", Domain: &domain, ReactivationDays: &days})
	_ = w.BeginConfig(fccxml.Config{
		Manufacturer: "Acme", Model: "HG 8245", SourceType: "SERIAL_LIST", ConditionID: &cond,
		SettingsType: "SPEED", Settings: []fccxml.Setting{{Name: "downloadUrl", Value: "http://speed.example/1G.bin"}},
	})
	_ = w.Serials([]string{"S1", "S2"}) // pages of 1000 in the service
	_ = w.Serials([]string{"S3"})
	_ = w.EndConfig()
	if err := w.End(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <fccExport>
	//   <formatVersion>1</formatVersion>
	//   <test>
	//     <name>Evening speed</name>
	//     <type>SPEED</type>
	//     <domain>12</domain>
	//     <reactivationDays>1</reactivationDays>
	//     <configs>
	//       <config>
	//         <manufacturer>Acme</manufacturer>
	//         <model>HG 8245</model>
	//         <sourceType>SERIAL_LIST</sourceType>
	//         <conditionId>4</conditionId>
	//         <speedSettings>
	//           <downloadUrl>http://speed.example/1G.bin</downloadUrl>
	//         </speedSettings>
	//         <fleet page="1"><serial>S1</serial><serial>S2</serial></fleet>
	//         <fleet page="2"><serial>S3</serial></fleet>
	//       </config>
	//     </configs>
	//   </test>
	// </fccExport>
}

func ExampleReadCampaign() {
	doc := `<fccExport><formatVersion>1</formatVersion>
<test><type>SPEED</type></test>
<test><type>SPEED</type></test></fccExport>`
	_, err := fccxml.ReadCampaign(strings.NewReader(doc))
	fmt.Println(err)
	// Output:
	// invalid XML document: the document must hold exactly one campaign: found a second test element (the first is at line 2) at line 3
}

func ExampleSerialList() {
	serials, err := fccxml.SerialList(strings.NewReader("\ufeffSerial\r\nSN1;SN2\r\n\"SN3\"\r\n"), 20000)
	fmt.Println(serials, err)
	// Output:
	// [SN1 SN2 SN3] <nil>
}

func ExampleFileName() {
	at := time.Date(2024, 3, 9, 8, 5, 3, 0, time.FixedZone("CET", 3600))
	fmt.Println(fccxml.FileName("Evening speed / Köln", 7, at))
	fmt.Println(fccxml.FileName("???", 7, at))
	// Output:
	// fcc-Evening-speed-K-ln-20240309-070503.xml
	// fcc-7-20240309-070503.xml
}
