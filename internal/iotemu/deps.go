// Package iotemu is the IoT emulator (spec: device-emulators.md, part A).
package iotemu

// Pins the dependencies the protocol stacks are being written against so
// that go mod tidy keeps them; removed once the stacks import them.
import (
	_ "github.com/dop251/goja"
	_ "github.com/eclipse/paho.golang/paho"
	_ "github.com/eclipse/paho.mqtt.golang"
	_ "github.com/fxamacker/cbor/v2"
	_ "github.com/mochi-mqtt/server/v2"
	_ "github.com/pion/dtls/v3"
	_ "github.com/plgd-dev/go-coap/v3"
)
