// Package iotscale measures how many devices one IoT emulator process
// runs: 10,000 LwM2M devices registered and updating against an LwM2M
// server, and 10,000 MQTT devices publishing to Mosquitto. The figures are
// Go benchmarks (see BENCHMARKS.md for the command lines):
//
//	go test ./bench/iotscale -run '^$' -bench LwM2M -benchtime 1x -timeout 30m
//	go test ./bench/iotscale -run '^$' -bench 'MQTT(5)?Devices' -benchtime 1x -timeout 30m
//
// CPESUITE_BENCH_DEVICES (default 10000) and CPESUITE_BENCH_STEADY (default
// 60s) change the device count and the steady-state window,
// CPESUITE_BENCH_CONCURRENT (default 100) the concurrentClients setting.
package iotscale
