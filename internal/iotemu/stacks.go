package iotemu

import (
	"cpesuite/internal/iotemu/coapdev"
	"cpesuite/internal/iotemu/lwm2m"
	"cpesuite/internal/iotemu/mqttdev"
	"cpesuite/internal/iotemu/proto"
)

// Stacks returns the loaded protocol stacks (GET /api/protocols/available).
// USP, FSH_HUB and DUSUN plug in here when they exist.
func Stacks() []proto.Protocol {
	return []proto.Protocol{lwm2m.Protocol{}, mqttdev.Protocol{}, &coapdev.Protocol{}}
}
