// Package mqttdev is the IoT emulator's MQTT device stack: each emulated
// device is one MQTT client (3.1.1 through paho.mqtt.golang, 5 through
// paho.golang) that publishes the generic sensor parameters of
// param.Sensor and accepts writes from the broker side.
//
// # Topic layout
//
// The layout below is the public contract of the stack (the API's OpenAPI
// quotes it). P is the topicPrefix option (default "cpesuite/devices"),
// C is the device's client id. All payloads are UTF-8; parameter values are
// always JSON strings, spelled as the API reports them.
//
//	P/C/telemetry    device → broker, QoS qos, retained if retainTelemetry.
//	                 Published every publishPeriodSec seconds (the first one
//	                 after a random delay within one period, so that many
//	                 devices do not publish in lockstep; 0 disables it) and on
//	                 every heartbeat:
//	                   {"clientId":"C","serialNumber":"SN","ts":1700000000000,
//	                    "params":{"SerialNumber":"SN","Temperature":"21.5",...}}
//	                 ts is Unix milliseconds; params holds every parameter in
//	                 declaration order. Uptime (seconds since the device was
//	                 started) is refreshed before each publish.
//
//	P/C/set          broker → device; the device subscribes with QoS qos.
//	                 A command writes one parameter or several:
//	                   {"id":"42","name":"Temperature","value":"22"}
//	                   {"id":7,"params":{"Temperature":"22","Switch":"true"}}
//	                 "id" is optional and may be any JSON value; values may
//	                 also be JSON numbers or booleans. Each write is checked
//	                 like an API write (writable, not frozen by a rule, valid
//	                 for the type); a failed write is reported in the ack and
//	                 does not stop the others.
//
//	P/C/ack          device → broker, QoS qos, never retained. One per
//	                 command, results in command order:
//	                   {"id":"42","results":[{"name":"Temperature","ok":true},
//	                    {"name":"Uptime","ok":false,"error":"..."}]}
//	                 "id" is present when the command had one. A payload that
//	                 is not a command is answered with an empty results list
//	                 and a top-level "error". While the device's failResponse
//	                 flag is on, every write is answered with
//	                 "ok":false,"error":"failResponse is on" and nothing is
//	                 written.
//
//	P/C/state        device → broker, QoS qos, retained. "online" after every
//	                 successful connect; "offline" on a clean stop and, as the
//	                 MQTT Last Will, when the connection dies.
//
//	P/C/param/<name> device → broker, QoS qos, retained if retainTelemetry.
//	                 Published when a parameter changes on the device side
//	                 (API write, automatic update, rule, or a write through
//	                 P/C/set); the payload is the new value. When changes come
//	                 faster than the connection can carry them only the latest
//	                 value of each parameter is sent.
//
// # Connection
//
// A device connects to tcp://ServerIP:ServerPort, or over TLS when its
// security mode is X509 (trust store and optional client certificate from
// PEM files). TLS-PSK is not supported: Go's TLS has no PSK cipher suites.
// With cleanSession=false an MQTT 5 device asks for a session that never
// expires, which is what a persistent MQTT 3.1.1 session is. Lost or
// refused connections are retried after 1 s, doubling up to 30 s (less up to
// 20 % jitter so that a broker restart is not met by every device at once).
package mqttdev
