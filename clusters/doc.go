// Package clusters defines the provider interface that brings up the clusters of a topology; implementations live under clusters/internal.
package clusters
