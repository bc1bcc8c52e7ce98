// Package harness is the engine: topology model, matrix expansion, run orchestration, probes and artifacts.
package harness
