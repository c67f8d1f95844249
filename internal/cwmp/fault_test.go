package cwmp

import (
	"strings"
	"testing"
)

func TestFaultCodeStrings(t *testing.T) {
	tests := map[FaultCode]string{
		FaultMethodNotSupported:      "Method not supported",
		FaultRequestDenied:           "Request denied (no reason specified)",
		FaultInternalError:           "Internal error",
		FaultInvalidArguments:        "Invalid arguments",
		FaultResourcesExceeded:       "Resources exceeded",
		FaultRetryRequest:            "Retry request",
		FaultVersionIncompatible:     "ACS version incompatible with CPE",
		FaultCPEMethodNotSupported:   "Method not supported",
		FaultCPERequestDenied:        "Request denied (no reason specified)",
		FaultCPEInternalError:        "Internal error",
		FaultCPEInvalidArguments:     "Invalid arguments",
		FaultCPEResourcesExceeded:    "Resources exceeded",
		FaultInvalidParameterName:    "Invalid parameter name",
		FaultInvalidParameterType:    "Invalid parameter type",
		FaultInvalidParameterValue:   "Invalid parameter value",
		FaultNonWritableParameter:    "Attempt to set a non-writable parameter",
		FaultNotificationRejected:    "Notification request rejected",
		FaultFileTransferFailure:     "File transfer failure",
		FaultUploadFailure:           "Upload failure",
		FaultFileTransferAuthFailure: "File transfer server authentication failure",
		FaultUnsupportedProtocol:     "Unsupported protocol for file transfer",
		FaultMulticastJoinFailure:    "File transfer failure: unable to join multicast group",
		FaultFileServerUnreachable:   "File transfer failure: unable to contact file server",
		FaultFileAccessFailure:       "File transfer failure: unable to access file",
		FaultDownloadIncomplete:      "File transfer failure: unable to complete download",
		FaultFileCorrupted:           "File transfer failure: file corrupted",
		FaultFileAuthFailure:         "File transfer failure: file authentication failure",
		FaultDUVersionAlreadyExists:  "Invalid Deployment Unit Update – Version already exists",
		8801:                         "Vendor defined fault",
		9899:                         "Vendor defined fault",
		9500:                         "Fault 9500",
		0:                            "Fault 0",
	}
	for code, want := range tests {
		if got := code.String(); got != want {
			t.Errorf("FaultCode(%d).String() = %q, want %q", code, got, want)
		}
	}
	for code := FaultCode(9000); code <= 9032; code++ {
		if strings.HasPrefix(code.String(), "Fault ") {
			t.Errorf("no standard text for %d", code)
		}
	}
}

func TestSOAPFaultCode(t *testing.T) {
	client := []FaultCode{8003, 9003, 9005, 9006, 9007, 9008}
	server := []FaultCode{8000, 8001, 8002, 8004, 8005, 9000, 9001, 9002, 9004, 9009, 9010, 9019, 9800}
	for _, c := range client {
		if c.SOAPFaultCode() != "Client" {
			t.Errorf("%d should be a Client fault", c)
		}
	}
	for _, c := range server {
		if c.SOAPFaultCode() != "Server" {
			t.Errorf("%d should be a Server fault", c)
		}
	}
}

func TestNewFault(t *testing.T) {
	f := NewFault(FaultInvalidParameterName, "")
	if f.SOAPFaultCode != "Client" || f.FaultString != "Invalid parameter name" || f.Method() != "Fault" {
		t.Fatalf("NewFault = %+v", f)
	}
	if got := NewFault(FaultCPEInternalError, "disk full").Error(); got != "cwmp fault 9002: disk full" {
		t.Fatalf("Error() = %q", got)
	}
	var err error = f
	if err.Error() == "" {
		t.Fatal("empty error")
	}
}
