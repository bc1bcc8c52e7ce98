// Package stargatepb holds the generated Go code of the Stargate wire
// protocol (stargate.proto). Regenerate with `make generate`.
package stargatepb

//go:generate protoc --plugin=protoc-gen-go=../../_tools/protoc-gen-go --plugin=protoc-gen-go-grpc=../../_tools/protoc-gen-go-grpc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative stargate.proto
