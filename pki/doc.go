// Package pki mints good and deliberately bad PKI with cfssl for a topology's names.
package pki
