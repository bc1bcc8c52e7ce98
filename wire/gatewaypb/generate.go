// Package gatewaypb holds the generated Go code of the worker-auth gateway
// API (llm_gateway.proto: llm_gateway.LlmGateway/AuthLlmWorker) that a
// Stargate started with --worker-auth-endpoint calls. Regenerate with
// `make generate`.
package gatewaypb

//go:generate protoc --plugin=protoc-gen-go=../../_tools/protoc-gen-go --plugin=protoc-gen-go-grpc=../../_tools/protoc-gen-go-grpc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative llm_gateway.proto
