// Package scenarios is the catalogue of positive and fail-closed conformance scenarios.
package scenarios
