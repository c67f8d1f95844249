package cwmp

import "time"

func ptr[T any](v T) *T { return &v }

var (
	t0 = time.Date(2024, 5, 17, 9, 30, 12, 0, time.UTC)
	t1 = time.Date(2024, 5, 17, 9, 31, 40, 250000000, time.UTC)
)

// informParams is a realistic 25-parameter Inform of a TR-098 gateway: the
// forced Inform parameters, the WAN addresses and some passive notifications.
var informParams = []ParameterValueStruct{
	{"InternetGatewayDevice.DeviceSummary", String("InternetGatewayDevice:1.4[](Baseline:2, EthernetLAN:1, WiFiLAN:2, ADSLWAN:1, EthernetWAN:1, QoS:1, Time:1)")},
	{"InternetGatewayDevice.DeviceInfo.SpecVersion", String("1.0")},
	{"InternetGatewayDevice.DeviceInfo.HardwareVersion", String("HW-2.1.0-rev-B")},
	{"InternetGatewayDevice.DeviceInfo.SoftwareVersion", String("7.14.3.2-build20240412")},
	{"InternetGatewayDevice.DeviceInfo.ProvisioningCode", String("ISP1.RES.FTTH")},
	{"InternetGatewayDevice.DeviceInfo.UpTime", UnsignedInt(864213)},
	{"InternetGatewayDevice.DeviceInfo.FirstUseDate", DateTime(t0)},
	{"InternetGatewayDevice.ManagementServer.ConnectionRequestURL", String("http://100.64.12.34:7547/a9f3c2e1b7d4")},
	{"InternetGatewayDevice.ManagementServer.ParameterKey", String("cfg-2024-05-17 & rollout")},
	{"InternetGatewayDevice.ManagementServer.PeriodicInformEnable", Bool(true)},
	{"InternetGatewayDevice.ManagementServer.PeriodicInformInterval", UnsignedInt(3600)},
	{"InternetGatewayDevice.ManagementServer.UDPConnectionRequestAddress", String("100.64.12.34:7548")},
	{"InternetGatewayDevice.WANDevice.1.WANConnectionDevice.1.WANIPConnection.1.ExternalIPAddress", String("100.64.12.34")},
	{"InternetGatewayDevice.WANDevice.1.WANConnectionDevice.1.WANIPConnection.1.MACAddress", String("00:1A:2B:3C:4D:5E")},
	{"InternetGatewayDevice.WANDevice.1.WANConnectionDevice.1.WANIPConnection.1.ConnectionStatus", String("Connected")},
	{"InternetGatewayDevice.WANDevice.1.WANConnectionDevice.1.WANIPConnection.1.DNSServers", String("8.8.8.8,1.1.1.1")},
	{"InternetGatewayDevice.WANDevice.1.WANConnectionDevice.1.WANPPPConnection.1.Username", String("user@isp.example")},
	{"InternetGatewayDevice.WANDevice.1.WANCommonInterfaceConfig.TotalBytesReceived", UnsignedLong(18446744073709)},
	{"InternetGatewayDevice.WANDevice.1.WANCommonInterfaceConfig.TotalBytesSent", UnsignedLong(9876543210)},
	{"InternetGatewayDevice.LANDevice.1.LANHostConfigManagement.IPInterface.1.IPInterfaceIPAddress", String("192.168.1.1")},
	{"InternetGatewayDevice.LANDevice.1.WLANConfiguration.1.SSID", String("Home <5G> \"Guest\"")},
	{"InternetGatewayDevice.LANDevice.1.WLANConfiguration.1.Enable", Bool(true)},
	{"InternetGatewayDevice.LANDevice.1.WLANConfiguration.1.Channel", UnsignedInt(36)},
	{"InternetGatewayDevice.Time.LocalTimeZoneName", String("CET-1CEST,M3.5.0,M10.5.0/3")},
	{"InternetGatewayDevice.X_ACME_Diagnostics.Temperature", Int(-4)},
}

// samples holds one envelope per message type; the golden files in
// testdata/golden are their encodings.
var samples = []struct {
	name string
	env  *Envelope
}{
	{"Inform", &Envelope{Version: CWMP12, ID: "1745", IDMustUnderstand: true, SupportedCWMPVersions: "1.0,1.1,1.2,1.3,1.4",
		Body: &Inform{
			DeviceID: DeviceID{Manufacturer: "ACME Networks", OUI: "00D09E", ProductClass: "HG8245-FTTH", SerialNumber: "ACME0012AB34CD"},
			Event: []EventStruct{
				{EventCode: EventBoot},
				{EventCode: EventMReboot, CommandKey: "reboot-17"},
				{EventCode: EventValueChange},
			},
			MaxEnvelopes: 1, CurrentTime: t0, RetryCount: 0,
			ParameterList: informParams,
		}}},
	{"InformResponse", &Envelope{Version: CWMP12, ID: "1745", IDMustUnderstand: true, UseCWMPVersion: "1.4", HoldRequests: ptr(false),
		Body: &InformResponse{MaxEnvelopes: 1}}},
	{"GetRPCMethods", NewEnvelope(CWMP10, "acs-1", &GetRPCMethods{})},
	{"GetRPCMethodsResponse", NewEnvelope(CWMP10, "acs-1", &GetRPCMethodsResponse{MethodList: []string{
		"GetRPCMethods", "SetParameterValues", "GetParameterValues", "GetParameterNames", "SetParameterAttributes",
		"GetParameterAttributes", "AddObject", "DeleteObject", "Reboot", "Download", "Upload", "FactoryReset",
		"ScheduleInform", "ChangeDUState", "X_ACME_Ping"}})},
	{"SetParameterValues", NewEnvelope(CWMP12, "acs-2", &SetParameterValues{
		ParameterList: []ParameterValueStruct{
			{"Device.WiFi.SSID.1.SSID", String("Café & Bar")},
			{"Device.WiFi.SSID.1.Enable", Bool(true)},
			{"Device.ManagementServer.PeriodicInformInterval", UnsignedInt(300)},
			{"Device.Time.NTPServer1", String("  pool.ntp.org  ")},
			{"Device.X_ACME_Config.Blob", Base64([]byte{0, 1, 2, 0xfe, 0xff})},
			{"Device.X_ACME_Config.Offset", Long(-9000000000)},
			{"Device.X_ACME_Config.Note", Value{Text: "untyped\nline two"}},
		},
		ParameterKey: "pk-42",
	})},
	{"SetParameterValuesResponse", NewEnvelope(CWMP12, "acs-2", &SetParameterValuesResponse{Status: 1})},
	{"GetParameterValues", NewEnvelope(CWMP13, "acs-3", &GetParameterValues{ParameterNames: []string{
		"Device.DeviceInfo.", "Device.WiFi.Radio.1.Channel"}})},
	{"GetParameterValuesResponse", NewEnvelope(CWMP13, "acs-3", &GetParameterValuesResponse{ParameterList: []ParameterValueStruct{
		{"Device.DeviceInfo.UpTime", UnsignedInt(4711)},
		{"Device.DeviceInfo.Manufacturer", String("ACME")},
		{"Device.WiFi.Radio.1.Channel", UnsignedInt(11)},
	}})},
	{"GetParameterNames", NewEnvelope(CWMP14, "acs-4", &GetParameterNames{ParameterPath: "Device.WiFi.", NextLevel: true})},
	{"GetParameterNamesResponse", NewEnvelope(CWMP14, "acs-4", &GetParameterNamesResponse{ParameterList: []ParameterInfoStruct{
		{Name: "Device.WiFi.Radio.", Writable: false},
		{Name: "Device.WiFi.SSID.", Writable: true},
	}})},
	{"SetParameterAttributes", NewEnvelope(CWMP11, "acs-5", &SetParameterAttributes{ParameterList: []SetParameterAttributesStruct{
		{Name: "Device.WiFi.SSID.1.SSID", NotificationChange: true, Notification: 2},
		{Name: "Device.DeviceInfo.", AccessListChange: true, AccessList: []string{"Subscriber"}},
	}})},
	{"SetParameterAttributesResponse", NewEnvelope(CWMP11, "acs-5", &SetParameterAttributesResponse{})},
	{"GetParameterAttributes", NewEnvelope(CWMP11, "acs-6", &GetParameterAttributes{ParameterNames: []string{"Device.WiFi.SSID.1.SSID"}})},
	{"GetParameterAttributesResponse", NewEnvelope(CWMP11, "acs-6", &GetParameterAttributesResponse{ParameterList: []ParameterAttributeStruct{
		{Name: "Device.WiFi.SSID.1.SSID", Notification: 2, AccessList: []string{"Subscriber"}},
		{Name: "Device.WiFi.SSID.1.Enable", Notification: 0},
	}})},
	{"AddObject", NewEnvelope(CWMP12, "acs-7", &AddObject{ObjectName: "Device.NAT.PortMapping.", ParameterKey: "pk-43"})},
	{"AddObjectResponse", NewEnvelope(CWMP12, "acs-7", &AddObjectResponse{InstanceNumber: 3, Status: 0})},
	{"DeleteObject", NewEnvelope(CWMP12, "acs-8", &DeleteObject{ObjectName: "Device.NAT.PortMapping.3.", ParameterKey: "pk-44"})},
	{"DeleteObjectResponse", NewEnvelope(CWMP12, "acs-8", &DeleteObjectResponse{Status: 1})},
	{"Reboot", NewEnvelope(CWMP10, "acs-9", &Reboot{CommandKey: "reboot-17"})},
	{"RebootResponse", NewEnvelope(CWMP10, "acs-9", &RebootResponse{})},
	{"FactoryReset", NewEnvelope(CWMP10, "acs-10", &FactoryReset{})},
	{"FactoryResetResponse", NewEnvelope(CWMP10, "acs-10", &FactoryResetResponse{})},
	{"ScheduleInform", NewEnvelope(CWMP12, "acs-11", &ScheduleInform{DelaySeconds: 600, CommandKey: "si-1"})},
	{"ScheduleInformResponse", NewEnvelope(CWMP12, "acs-11", &ScheduleInformResponse{})},
	{"Download", NewEnvelope(CWMP12, "acs-12", &Download{CommandKey: "fw-7.15", FileType: "1 Firmware Upgrade Image",
		URL: "https://fw.example/acme/7.15.bin?sig=a&exp=1", Username: "cpe", Password: "s3cr3t", FileSize: 33554432,
		TargetFileName: "fw.bin", DelaySeconds: 5, SuccessURL: "https://ok.example/", FailureURL: ""})},
	{"DownloadResponse", NewEnvelope(CWMP12, "acs-12", &DownloadResponse{Status: 1})},
	{"Upload", NewEnvelope(CWMP12, "acs-13", &Upload{CommandKey: "log-1", FileType: "2 Vendor Log File",
		URL: "https://logs.example/up", Username: "u", Password: "p", DelaySeconds: 0})},
	{"UploadResponse", NewEnvelope(CWMP12, "acs-13", &UploadResponse{Status: 0, StartTime: t0, CompleteTime: t1})},
	{"TransferComplete", NewEnvelope(CWMP12, "cpe-1", &TransferComplete{CommandKey: "fw-7.15",
		FaultStruct: FaultStruct{FaultCode: FaultDownloadIncomplete, FaultString: FaultDownloadIncomplete.String()},
		StartTime:   t0, CompleteTime: t1})},
	{"TransferCompleteResponse", NewEnvelope(CWMP12, "cpe-1", &TransferCompleteResponse{})},
	{"AutonomousTransferComplete", NewEnvelope(CWMP12, "cpe-2", &AutonomousTransferComplete{
		AnnounceURL: "http://announce.example/", TransferURL: "http://files.example/fw.bin", IsDownload: true,
		FileType: "1 Firmware Upgrade Image", FileSize: 1024, TargetFileName: "fw.bin", StartTime: t0, CompleteTime: t1})},
	{"AutonomousTransferCompleteResponse", NewEnvelope(CWMP12, "cpe-2", &AutonomousTransferCompleteResponse{})},
	{"RequestDownload", NewEnvelope(CWMP12, "cpe-3", &RequestDownload{FileType: "3 Vendor Configuration File",
		FileTypeArg: []ArgStruct{{Name: "Version", Value: "2"}, {Name: "Profile", Value: "business"}}})},
	{"RequestDownloadResponse", NewEnvelope(CWMP12, "cpe-3", &RequestDownloadResponse{})},
	{"ScheduleDownload", NewEnvelope(CWMP12, "acs-14", &ScheduleDownload{CommandKey: "sd-1", FileType: "1 Firmware Upgrade Image",
		URL: "https://fw.example/8.0.bin", FileSize: 1 << 20, TargetFileName: "fw.bin",
		TimeWindowList: []TimeWindowStruct{
			{WindowStart: 0, WindowEnd: 3600, WindowMode: "1 At Any Time", MaxRetries: -1},
			{WindowStart: 7200, WindowEnd: 10800, WindowMode: "4 Confirmation Needed", UserMessage: "Update now?", MaxRetries: 3},
		}})},
	{"ScheduleDownloadResponse", NewEnvelope(CWMP12, "acs-14", &ScheduleDownloadResponse{})},
	{"CancelTransfer", NewEnvelope(CWMP12, "acs-15", &CancelTransfer{CommandKey: "sd-1"})},
	{"CancelTransferResponse", NewEnvelope(CWMP12, "acs-15", &CancelTransferResponse{})},
	{"GetQueuedTransfers", NewEnvelope(CWMP10, "acs-16", &GetQueuedTransfers{})},
	{"GetQueuedTransfersResponse", NewEnvelope(CWMP10, "acs-16", &GetQueuedTransfersResponse{TransferList: []QueuedTransferStruct{
		{CommandKey: "fw-7.15", State: 2}, {CommandKey: "log-1", State: 1}}})},
	{"GetAllQueuedTransfers", NewEnvelope(CWMP12, "acs-17", &GetAllQueuedTransfers{})},
	{"GetAllQueuedTransfersResponse", NewEnvelope(CWMP12, "acs-17", &GetAllQueuedTransfersResponse{TransferList: []AllQueuedTransferStruct{
		{CommandKey: "fw-7.15", State: 2, IsDownload: true, FileType: "1 Firmware Upgrade Image", FileSize: 1 << 20, TargetFileName: "fw.bin"}}})},
	{"ChangeDUState", NewEnvelope(CWMP12, "acs-18", &ChangeDUState{
		Operations: []Operation{
			InstallOp{URL: "https://apps.example/speedtest.ipk", UUID: "8d2b2f6a-1f3c-5a8e-9b1a-7c2d4e6f8a0b", ExecutionEnvRef: "Device.SoftwareModules.ExecEnv.1."},
			UpdateOp{UUID: "8d2b2f6a-1f3c-5a8e-9b1a-7c2d4e6f8a0b", Version: "2.0"},
			UpdateOp{},
			UninstallOp{UUID: "0f1e2d3c-4b5a-5968-8776-a5b4c3d2e1f0"},
		},
		CommandKey: "du-1"})},
	{"ChangeDUStateResponse", NewEnvelope(CWMP12, "acs-18", &ChangeDUStateResponse{})},
	{"DUStateChangeComplete", NewEnvelope(CWMP12, "cpe-4", &DUStateChangeComplete{
		Results: []OpResult{
			{UUID: "8d2b2f6a-1f3c-5a8e-9b1a-7c2d4e6f8a0b", DeploymentUnitRef: "Device.SoftwareModules.DeploymentUnit.1.",
				Version: "1.0", CurrentState: "Installed", Resolved: true,
				ExecutionUnitRefList: "Device.SoftwareModules.ExecutionUnit.1.", StartTime: t0, CompleteTime: t1},
			{UUID: "0f1e2d3c-4b5a-5968-8776-a5b4c3d2e1f0", CurrentState: "Failed",
				Fault: FaultStruct{FaultCode: FaultUnknownDU, FaultString: "Unknown Deployment Unit"}},
		},
		CommandKey: "du-1"})},
	{"DUStateChangeCompleteResponse", NewEnvelope(CWMP12, "cpe-4", &DUStateChangeCompleteResponse{})},
	{"AutonomousDUStateChangeComplete", NewEnvelope(CWMP12, "cpe-5", &AutonomousDUStateChangeComplete{
		Results: []AutonOpResult{{OpResult: OpResult{UUID: "8d2b2f6a-1f3c-5a8e-9b1a-7c2d4e6f8a0b",
			DeploymentUnitRef: "Device.SoftwareModules.DeploymentUnit.1.", Version: "1.1", CurrentState: "Installed",
			Resolved: true, StartTime: t0, CompleteTime: t1}, OperationPerformed: "Update"}}})},
	{"AutonomousDUStateChangeCompleteResponse", NewEnvelope(CWMP12, "cpe-5", &AutonomousDUStateChangeCompleteResponse{})},
	{"Kicked", NewEnvelope(CWMP10, "cpe-6", &Kicked{Command: "setup", Referer: "http://portal.example/", Arg: "a=1&b=2", Next: "http://portal.example/done"})},
	{"KickedResponse", NewEnvelope(CWMP10, "cpe-6", &KickedResponse{NextURL: "http://portal.example/done?ok=1"})},
	{"SetVouchers", NewEnvelope(CWMP10, "acs-19", &SetVouchers{VoucherList: [][]byte{[]byte("<Signature>voucher one</Signature>"), {1, 2, 3}}})},
	{"SetVouchersResponse", NewEnvelope(CWMP10, "acs-19", &SetVouchersResponse{})},
	{"GetOptions", NewEnvelope(CWMP10, "acs-20", &GetOptions{OptionName: ""})},
	{"GetOptionsResponse", NewEnvelope(CWMP10, "acs-20", &GetOptionsResponse{OptionList: []OptionStruct{
		{OptionName: "VoIP", VoucherSN: 17, State: 3, Mode: 1, StartDate: t0, ExpirationDate: t1, IsTransferable: 0},
		{OptionName: "IPTV", VoucherSN: 18, State: 1, Mode: 2, StartDate: t0, IsTransferable: 1},
	}})},
	{"Fault", NewEnvelope(CWMP12, "acs-2", &Fault{SOAPFaultCode: "Client", FaultCode: FaultCPEInvalidArguments,
		FaultString: "Invalid arguments", SetParameterValuesFaults: []SPVFault{
			{ParameterName: "Device.WiFi.SSID.1.SSID", FaultCode: FaultInvalidParameterValue, FaultString: "SSID too long"},
			{ParameterName: "Device.DeviceInfo.UpTime", FaultCode: FaultNonWritableParameter, FaultString: "Attempt to set a non-writable parameter"},
		}})},
	{"Fault-ACS", NewEnvelope(CWMP10, "1745", NewFault(FaultRetryRequest, ""))},
	{"Fault-plain-SOAP", NewEnvelope(CWMP10, "x", &Fault{SOAPFaultCode: "Server", FaultString: "Internal Server Error"})},
	{"Header-all", &Envelope{Version: CWMP13, ID: "h-1", IDMustUnderstand: true, HoldRequests: ptr(true), NoMoreRequests: ptr(true),
		SessionTimeout: ptr(uint32(60)), Body: &GetRPCMethods{}}},
	{"Header-none", &Envelope{Version: CWMP11, Body: &InformResponse{MaxEnvelopes: 1}}},
}
