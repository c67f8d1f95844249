package param

// Sensor returns the parameters of the generic sensor device that the
// MQTT and CoAP stacks emulate: identity (read-only), measurements
// (writable so tests and servers can drive them, and the usual targets of
// automatic updates) and two settings.
func Sensor(serial, manufacturer, model string) []Param {
	return []Param{
		{Name: "SerialNumber", Value: serial, Type: String},
		{Name: "Manufacturer", Value: manufacturer, Type: String},
		{Name: "ModelName", Value: model, Type: String},
		{Name: "FirmwareVersion", Value: "1.0.0", Type: String},
		{Name: "Temperature", Value: "21.5", Type: Float, Writable: true},
		{Name: "Humidity", Value: "45", Type: Float, Writable: true},
		{Name: "Pressure", Value: "1013.25", Type: Float, Writable: true},
		{Name: "BatteryLevel", Value: "100", Type: Integer, Writable: true},
		{Name: "SignalStrength", Value: "-70", Type: Integer, Writable: true},
		{Name: "Switch", Value: "false", Type: Boolean, Writable: true},
		{Name: "ReportingPeriod", Value: "10", Type: Integer, Writable: true},
		{Name: "Uptime", Value: "0", Type: Integer},
	}
}
