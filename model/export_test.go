package model

// CPUTime is cpuTime for the external benchmarks (package model_test).
var CPUTime = cpuTime
