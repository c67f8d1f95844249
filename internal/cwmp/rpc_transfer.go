package cwmp

import "time"

// Download asks the CPE to fetch a file such as "1 Firmware Upgrade Image".
type Download struct {
	CommandKey     string
	FileType       string
	URL            string
	Username       string
	Password       string
	FileSize       uint32
	TargetFileName string
	DelaySeconds   uint32
	SuccessURL     string
	FailureURL     string
}

// DownloadResponse reports Status 0 (done, with the times) or 1 (a
// TransferComplete will follow; the times are the Unknown Time).
type DownloadResponse struct {
	Status       int32
	StartTime    time.Time
	CompleteTime time.Time
}

// Upload asks the CPE to send a file such as "1 Vendor Configuration File".
type Upload struct {
	CommandKey   string
	FileType     string
	URL          string
	Username     string
	Password     string
	DelaySeconds uint32
}

// UploadResponse is like DownloadResponse.
type UploadResponse struct {
	Status       int32
	StartTime    time.Time
	CompleteTime time.Time
}

// TransferComplete reports the end of a Download, ScheduleDownload or Upload.
type TransferComplete struct {
	CommandKey   string
	FaultStruct  FaultStruct
	StartTime    time.Time
	CompleteTime time.Time
}

// TransferCompleteResponse acknowledges TransferComplete.
type TransferCompleteResponse struct{ noArgs }

// AutonomousTransferComplete reports a transfer the ACS did not ask for.
type AutonomousTransferComplete struct {
	AnnounceURL    string
	TransferURL    string
	IsDownload     bool
	FileType       string
	FileSize       uint32
	TargetFileName string
	FaultStruct    FaultStruct
	StartTime      time.Time
	CompleteTime   time.Time
}

// AutonomousTransferCompleteResponse acknowledges AutonomousTransferComplete.
type AutonomousTransferCompleteResponse struct{ noArgs }

// RequestDownload is the CPE asking the ACS to send it a Download.
type RequestDownload struct {
	FileType    string
	FileTypeArg []ArgStruct
}

// ArgStruct is a name and value argument of RequestDownload.
type ArgStruct struct {
	Name  string
	Value string
}

// RequestDownloadResponse acknowledges RequestDownload.
type RequestDownloadResponse struct{ noArgs }

// ScheduleDownload is a Download within one or two time windows.
type ScheduleDownload struct {
	CommandKey     string
	FileType       string
	URL            string
	Username       string
	Password       string
	FileSize       uint32
	TargetFileName string
	TimeWindowList []TimeWindowStruct
}

// TimeWindowStruct is a window, in seconds from the request, in which a
// scheduled download may run; WindowMode is such as "1 At Any Time".
type TimeWindowStruct struct {
	WindowStart uint32
	WindowEnd   uint32
	WindowMode  string
	UserMessage string
	MaxRetries  int32
}

// ScheduleDownloadResponse acknowledges ScheduleDownload.
type ScheduleDownloadResponse struct{ noArgs }

// CancelTransfer cancels a queued transfer by its CommandKey.
type CancelTransfer struct {
	CommandKey string
}

// CancelTransferResponse acknowledges CancelTransfer.
type CancelTransferResponse struct{ noArgs }

// GetQueuedTransfers lists the transfers the ACS asked for (deprecated in
// favour of GetAllQueuedTransfers).
type GetQueuedTransfers struct{ noArgs }

// GetQueuedTransfersResponse lists the queued transfers.
type GetQueuedTransfersResponse struct {
	TransferList []QueuedTransferStruct
}

// QueuedTransferStruct is a queued transfer; State 1 not started, 2 in
// progress, 3 completed.
type QueuedTransferStruct struct {
	CommandKey string
	State      int32
}

// GetAllQueuedTransfers lists all queued transfers, autonomous ones too.
type GetAllQueuedTransfers struct{ noArgs }

// GetAllQueuedTransfersResponse lists all queued transfers.
type GetAllQueuedTransfersResponse struct {
	TransferList []AllQueuedTransferStruct
}

// AllQueuedTransferStruct is one queued transfer in detail.
type AllQueuedTransferStruct struct {
	CommandKey     string
	State          int32
	IsDownload     bool
	FileType       string
	FileSize       uint32
	TargetFileName string
}

// Method returns "Download".
func (*Download) Method() string { return "Download" }

// Method returns "DownloadResponse".
func (*DownloadResponse) Method() string { return "DownloadResponse" }

// Method returns "Upload".
func (*Upload) Method() string { return "Upload" }

// Method returns "UploadResponse".
func (*UploadResponse) Method() string { return "UploadResponse" }

// Method returns "TransferComplete".
func (*TransferComplete) Method() string { return "TransferComplete" }

// Method returns "TransferCompleteResponse".
func (*TransferCompleteResponse) Method() string { return "TransferCompleteResponse" }

// Method returns "AutonomousTransferComplete".
func (*AutonomousTransferComplete) Method() string { return "AutonomousTransferComplete" }

// Method returns "AutonomousTransferCompleteResponse".
func (*AutonomousTransferCompleteResponse) Method() string {
	return "AutonomousTransferCompleteResponse"
}

// Method returns "RequestDownload".
func (*RequestDownload) Method() string { return "RequestDownload" }

// Method returns "RequestDownloadResponse".
func (*RequestDownloadResponse) Method() string { return "RequestDownloadResponse" }

// Method returns "ScheduleDownload".
func (*ScheduleDownload) Method() string { return "ScheduleDownload" }

// Method returns "ScheduleDownloadResponse".
func (*ScheduleDownloadResponse) Method() string { return "ScheduleDownloadResponse" }

// Method returns "CancelTransfer".
func (*CancelTransfer) Method() string { return "CancelTransfer" }

// Method returns "CancelTransferResponse".
func (*CancelTransferResponse) Method() string { return "CancelTransferResponse" }

// Method returns "GetQueuedTransfers".
func (*GetQueuedTransfers) Method() string { return "GetQueuedTransfers" }

// Method returns "GetQueuedTransfersResponse".
func (*GetQueuedTransfersResponse) Method() string { return "GetQueuedTransfersResponse" }

// Method returns "GetAllQueuedTransfers".
func (*GetAllQueuedTransfers) Method() string { return "GetAllQueuedTransfers" }

// Method returns "GetAllQueuedTransfersResponse".
func (*GetAllQueuedTransfersResponse) Method() string { return "GetAllQueuedTransfersResponse" }

func (m *Download) appendXML(e *encoder) {
	e.str("CommandKey", m.CommandKey)
	e.str("FileType", m.FileType)
	e.str("URL", m.URL)
	e.str("Username", m.Username)
	e.str("Password", m.Password)
	e.uint("FileSize", uint64(m.FileSize))
	e.str("TargetFileName", m.TargetFileName)
	e.uint("DelaySeconds", uint64(m.DelaySeconds))
	e.str("SuccessURL", m.SuccessURL)
	e.str("FailureURL", m.FailureURL)
}

func (m *Download) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "CommandKey":
			return d.str(&m.CommandKey)
		case "FileType":
			return d.str(&m.FileType)
		case "URL":
			return d.str(&m.URL)
		case "Username":
			return d.str(&m.Username)
		case "Password":
			return d.str(&m.Password)
		case "FileSize":
			return d.uint32(&m.FileSize)
		case "TargetFileName":
			return d.str(&m.TargetFileName)
		case "DelaySeconds":
			return d.uint32(&m.DelaySeconds)
		case "SuccessURL":
			return d.str(&m.SuccessURL)
		case "FailureURL":
			return d.str(&m.FailureURL)
		}
		return d.skip()
	})
}

func (m *DownloadResponse) appendXML(e *encoder) {
	appendTransferResult(e, m.Status, m.StartTime, m.CompleteTime)
}

func (m *DownloadResponse) decodeXML(d *decoder) error {
	return decodeTransferResult(d, &m.Status, &m.StartTime, &m.CompleteTime)
}

func (m *Upload) appendXML(e *encoder) {
	e.str("CommandKey", m.CommandKey)
	e.str("FileType", m.FileType)
	e.str("URL", m.URL)
	e.str("Username", m.Username)
	e.str("Password", m.Password)
	e.uint("DelaySeconds", uint64(m.DelaySeconds))
}

func (m *Upload) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "CommandKey":
			return d.str(&m.CommandKey)
		case "FileType":
			return d.str(&m.FileType)
		case "URL":
			return d.str(&m.URL)
		case "Username":
			return d.str(&m.Username)
		case "Password":
			return d.str(&m.Password)
		case "DelaySeconds":
			return d.uint32(&m.DelaySeconds)
		}
		return d.skip()
	})
}

func (m *UploadResponse) appendXML(e *encoder) {
	appendTransferResult(e, m.Status, m.StartTime, m.CompleteTime)
}

func (m *UploadResponse) decodeXML(d *decoder) error {
	return decodeTransferResult(d, &m.Status, &m.StartTime, &m.CompleteTime)
}

func appendTransferResult(e *encoder, status int32, start, complete time.Time) {
	e.int("Status", int64(status))
	e.time("StartTime", start)
	e.time("CompleteTime", complete)
}

func decodeTransferResult(d *decoder, status *int32, start, complete *time.Time) error {
	return d.children(func(name string) error {
		switch name {
		case "Status":
			return d.int32(status)
		case "StartTime":
			return d.dateTime(start)
		case "CompleteTime":
			return d.dateTime(complete)
		}
		return d.skip()
	})
}

func (m *TransferComplete) appendXML(e *encoder) {
	e.str("CommandKey", m.CommandKey)
	m.FaultStruct.appendXML(e, "FaultStruct")
	e.time("StartTime", m.StartTime)
	e.time("CompleteTime", m.CompleteTime)
}

func (m *TransferComplete) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "CommandKey":
			return d.str(&m.CommandKey)
		case "FaultStruct":
			return m.FaultStruct.decodeXML(d)
		case "StartTime":
			return d.dateTime(&m.StartTime)
		case "CompleteTime":
			return d.dateTime(&m.CompleteTime)
		}
		return d.skip()
	})
}

func (m *AutonomousTransferComplete) appendXML(e *encoder) {
	e.str("AnnounceURL", m.AnnounceURL)
	e.str("TransferURL", m.TransferURL)
	e.bool("IsDownload", m.IsDownload)
	e.str("FileType", m.FileType)
	e.uint("FileSize", uint64(m.FileSize))
	e.str("TargetFileName", m.TargetFileName)
	m.FaultStruct.appendXML(e, "FaultStruct")
	e.time("StartTime", m.StartTime)
	e.time("CompleteTime", m.CompleteTime)
}

func (m *AutonomousTransferComplete) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "AnnounceURL":
			return d.str(&m.AnnounceURL)
		case "TransferURL":
			return d.str(&m.TransferURL)
		case "IsDownload":
			return d.boolean(&m.IsDownload)
		case "FileType":
			return d.str(&m.FileType)
		case "FileSize":
			return d.uint32(&m.FileSize)
		case "TargetFileName":
			return d.str(&m.TargetFileName)
		case "FaultStruct":
			return m.FaultStruct.decodeXML(d)
		case "StartTime":
			return d.dateTime(&m.StartTime)
		case "CompleteTime":
			return d.dateTime(&m.CompleteTime)
		}
		return d.skip()
	})
}

func (m *RequestDownload) appendXML(e *encoder) {
	e.str("FileType", m.FileType)
	appendArray(e, "FileTypeArg", "ArgStruct", m.FileTypeArg)
}

func (m *RequestDownload) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "FileType":
			return d.str(&m.FileType)
		case "FileTypeArg":
			return decodeArray(d, &m.FileTypeArg)
		}
		return d.skip()
	})
}

func (s *ArgStruct) appendFields(e *encoder) {
	e.str("Name", s.Name)
	e.str("Value", s.Value)
}

func (s *ArgStruct) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "Name":
			return d.str(&s.Name)
		case "Value":
			return d.str(&s.Value)
		}
		return d.skip()
	})
}

func (m *ScheduleDownload) appendXML(e *encoder) {
	e.str("CommandKey", m.CommandKey)
	e.str("FileType", m.FileType)
	e.str("URL", m.URL)
	e.str("Username", m.Username)
	e.str("Password", m.Password)
	e.uint("FileSize", uint64(m.FileSize))
	e.str("TargetFileName", m.TargetFileName)
	appendArray(e, "TimeWindowList", "TimeWindowStruct", m.TimeWindowList)
}

func (m *ScheduleDownload) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "CommandKey":
			return d.str(&m.CommandKey)
		case "FileType":
			return d.str(&m.FileType)
		case "URL":
			return d.str(&m.URL)
		case "Username":
			return d.str(&m.Username)
		case "Password":
			return d.str(&m.Password)
		case "FileSize":
			return d.uint32(&m.FileSize)
		case "TargetFileName":
			return d.str(&m.TargetFileName)
		case "TimeWindowList":
			return decodeArray(d, &m.TimeWindowList)
		}
		return d.skip()
	})
}

func (s *TimeWindowStruct) appendFields(e *encoder) {
	e.uint("WindowStart", uint64(s.WindowStart))
	e.uint("WindowEnd", uint64(s.WindowEnd))
	e.str("WindowMode", s.WindowMode)
	e.str("UserMessage", s.UserMessage)
	e.int("MaxRetries", int64(s.MaxRetries))
}

func (s *TimeWindowStruct) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "WindowStart":
			return d.uint32(&s.WindowStart)
		case "WindowEnd":
			return d.uint32(&s.WindowEnd)
		case "WindowMode":
			return d.str(&s.WindowMode)
		case "UserMessage":
			return d.str(&s.UserMessage)
		case "MaxRetries":
			return d.int32(&s.MaxRetries)
		}
		return d.skip()
	})
}

func (m *CancelTransfer) appendXML(e *encoder) { e.str("CommandKey", m.CommandKey) }

func (m *CancelTransfer) decodeXML(d *decoder) error { return decodeCommandKey(d, &m.CommandKey) }

func (m *GetQueuedTransfersResponse) appendXML(e *encoder) {
	appendArray(e, "TransferList", "QueuedTransferStruct", m.TransferList)
}

func (m *GetQueuedTransfersResponse) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "TransferList" {
			return decodeArray(d, &m.TransferList)
		}
		return d.skip()
	})
}

func (s *QueuedTransferStruct) appendFields(e *encoder) {
	e.str("CommandKey", s.CommandKey)
	e.int("State", int64(s.State))
}

func (s *QueuedTransferStruct) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "CommandKey":
			return d.str(&s.CommandKey)
		case "State":
			return d.int32(&s.State)
		}
		return d.skip()
	})
}

func (m *GetAllQueuedTransfersResponse) appendXML(e *encoder) {
	appendArray(e, "TransferList", "AllQueuedTransferStruct", m.TransferList)
}

func (m *GetAllQueuedTransfersResponse) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "TransferList" {
			return decodeArray(d, &m.TransferList)
		}
		return d.skip()
	})
}

func (s *AllQueuedTransferStruct) appendFields(e *encoder) {
	e.str("CommandKey", s.CommandKey)
	e.int("State", int64(s.State))
	e.bool("IsDownload", s.IsDownload)
	e.str("FileType", s.FileType)
	e.uint("FileSize", uint64(s.FileSize))
	e.str("TargetFileName", s.TargetFileName)
}

func (s *AllQueuedTransferStruct) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "CommandKey":
			return d.str(&s.CommandKey)
		case "State":
			return d.int32(&s.State)
		case "IsDownload":
			return d.boolean(&s.IsDownload)
		case "FileType":
			return d.str(&s.FileType)
		case "FileSize":
			return d.uint32(&s.FileSize)
		case "TargetFileName":
			return d.str(&s.TargetFileName)
		}
		return d.skip()
	})
}
