// Package fccxml reads and writes the campaign configuration document of
// PUT /FCC/item/export and PUT /FCC/item/import, and reads the serial uploads
// of PUT /FCC/devices/import and the multipart device resolution.
//
// # The document
//
// The element names below are the contract; whitespace between elements is
// not. The Writer produces exactly this shape:
//
//	<?xml version="1.0" encoding="UTF-8"?>
//	<fccExport>
//	  <formatVersion>1</formatVersion>
//	  <test>
//	    <name>Evening speed</name>
//	    <type>SPEED</type>
//	    <domain>12</domain>
//	    <reactivationDays>1</reactivationDays>
//	    <configs>
//	      <config>
//	        <manufacturer>Acme</manufacturer>
//	        <model>HG 8245</model>
//	        <sourceType>SERIAL_LIST</sourceType>
//	        <conditionId>4</conditionId>
//	        <speedSettings>
//	          <downloadUrl>http://speed.example/1G.bin</downloadUrl>
//	          <timeBasedTestDuration>10</timeBasedTestDuration>
//	        </speedSettings>
//	        <fleet page="1"><serial>S1</serial><serial>S2</serial></fleet>
//	        <fleet page="2"><serial>S1001</serial></fleet>
//	      </config>
//	    </configs>
//	  </test>
//	</fccExport>
//
// Rules of the shape:
//   - domain, reactivationDays and conditionId are omitted when nil; an
//     empty element is not a way to say nil and is refused on read.
//   - The settings block is speedSettings (settings type SPEED) or
//     latencySettings (LATENCY), at most one per config, omitted when the
//     settings type is empty. It holds one element per setting in order,
//     named by the setting's JSON wire name, which must be a name of the form
//     [A-Za-z_][A-Za-z0-9_.-]*; its text is the value. A setting name appears
//     at most once per block.
//   - The frozen fleet is written as fleet elements of at most one page each
//     (the caller pages by 1000). The page attribute is informational: the
//     reader ignores attributes and concatenates the serials of all fleet
//     elements of a config in document order. The serials of one page share
//     a line, which keeps an export of 200,000 serials well below the 10MB
//     upload limit of the import.
//   - There is no schedule, state or run history in the document.
//
// # Reading
//
// Every reader here takes untrusted input. A document type declaration
// (<!DOCTYPE ...>, or any other <!...> directive) is refused, so no entity
// can be declared, and a reference to any entity other than the five
// predefined ones (&amp; &lt; &gt; &quot; &apos;) is refused; this defeats
// "billion laughs" expansion and external entities. Character references
// such as &#xD; are read as usual.
// Elements nest at most 64 deep, texts are at most 64KiB, and counts of
// configs, settings and serials are bounded. Only UTF-8 is read (a leading
// byte order mark is skipped); a declaration of another encoding is refused.
// Namespaces are ignored: elements are matched by local name.
//
// Problems of the input are reported as errors wrapping ErrInvalid, with a
// message fit for the caller naming the problem and, where known, its line.
// An error of the underlying reader (for example *http.MaxBytesError) is
// returned wrapped as is and does not wrap ErrInvalid, so that a caller can
// answer 413 for an oversized upload and 400 for a bad one.
//
// Text values (name, manufacturer, model, setting values) are read verbatim;
// enumerations and integers (formatVersion, type, sourceType, domain,
// reactivationDays, conditionId) and serials have surrounding white space
// trimmed, because hand-edited documents indent them.
package fccxml

import "errors"

// FormatVersion is the version of the document this package writes, and the
// only one it reads.
const FormatVersion = "1"

// ErrInvalid is wrapped by every error that reports a problem of the input
// document itself (as opposed to a failure to read it).
var ErrInvalid = errors.New("invalid XML document")
