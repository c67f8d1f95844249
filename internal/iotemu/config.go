package iotemu

import (
	"net"
	"strconv"
	"time"

	"cpesuite/internal/platform/config"
)

// Config is the emulator's start-up configuration. What operators change
// at run time is the Settings resource, kept in the connection options
// file of the data directory.
type Config struct {
	Addr    string // set by the module from the port table
	DataDir string // the emulator's own folder, set by the module

	// BrokerAddr is where the embedded MQTT broker listens; empty disables it.
	BrokerAddr string
	MaxDevices int
	RuleBudget time.Duration
	StopWait   time.Duration
}

// RegisterFlags declares the variables.
func (c *Config) RegisterFlags(s *config.Set) {
	s.String(&c.BrokerAddr, "iot-emulator.broker-addr", "CPESUITE_IOT_EMULATOR_BROKER_ADDR", "127.0.0.1:1884", "listen address of the embedded MQTT broker the default configuration points devices at; empty: no broker")
	s.Int(&c.MaxDevices, "iot-emulator.max-devices", "CPESUITE_IOT_EMULATOR_MAX_DEVICES", 20000, "most devices one emulator process runs")
	s.Duration(&c.RuleBudget, "iot-emulator.rule-budget", "CPESUITE_IOT_EMULATOR_RULE_BUDGET", 50*time.Millisecond, "time one call of the parameter rule may take before it is interrupted")
	s.Duration(&c.StopWait, "iot-emulator.stop-wait", "CPESUITE_IOT_EMULATOR_STOP_WAIT", 10*time.Second, "how long stop waits for devices to deregister")
}

// Validate checks the values.
func (c *Config) Validate() error {
	if c.BrokerAddr != "" {
		if _, p, err := net.SplitHostPort(c.BrokerAddr); err != nil {
			return config.Errorf("CPESUITE_IOT_EMULATOR_BROKER_ADDR", "must be host:port: %v", err)
		} else if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
			return config.Errorf("CPESUITE_IOT_EMULATOR_BROKER_ADDR", "port must be from 0 to 65535")
		}
	}
	if c.MaxDevices < 1 || c.MaxDevices > 100000 {
		return config.Errorf("CPESUITE_IOT_EMULATOR_MAX_DEVICES", "must be from 1 to 100000")
	}
	if c.RuleBudget < time.Millisecond || c.RuleBudget > 10*time.Second {
		return config.Errorf("CPESUITE_IOT_EMULATOR_RULE_BUDGET", "must be from 1ms to 10s")
	}
	if c.StopWait < 100*time.Millisecond {
		return config.Errorf("CPESUITE_IOT_EMULATOR_STOP_WAIT", "must be at least 100ms")
	}
	return nil
}
