package kubelet

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/virtual-kubelet/virtual-kubelet/log"
)

// vkLogger adapts virtual-kubelet's logger interface to slog.
type vkLogger struct{ l *slog.Logger }

var _ log.Logger = vkLogger{}

func (v vkLogger) emit(level slog.Level, msg string) { v.l.Log(context.Background(), level, msg) }

func (v vkLogger) Debug(a ...any)                         { v.emit(slog.LevelDebug, fmt.Sprint(a...)) }
func (v vkLogger) Debugf(f string, a ...any)              { v.emit(slog.LevelDebug, fmt.Sprintf(f, a...)) }
func (v vkLogger) Info(a ...any)                          { v.emit(slog.LevelInfo, fmt.Sprint(a...)) }
func (v vkLogger) Infof(f string, a ...any)               { v.emit(slog.LevelInfo, fmt.Sprintf(f, a...)) }
func (v vkLogger) Warn(a ...any)                          { v.emit(slog.LevelWarn, fmt.Sprint(a...)) }
func (v vkLogger) Warnf(f string, a ...any)               { v.emit(slog.LevelWarn, fmt.Sprintf(f, a...)) }
func (v vkLogger) Error(a ...any)                         { v.emit(slog.LevelError, fmt.Sprint(a...)) }
func (v vkLogger) Errorf(f string, a ...any)              { v.emit(slog.LevelError, fmt.Sprintf(f, a...)) }
func (v vkLogger) Fatal(a ...any)                         { v.emit(slog.LevelError, fmt.Sprint(a...)) }
func (v vkLogger) Fatalf(f string, a ...any)              { v.emit(slog.LevelError, fmt.Sprintf(f, a...)) }
func (v vkLogger) WithField(k string, val any) log.Logger { return vkLogger{v.l.With(k, val)} }
func (v vkLogger) WithError(err error) log.Logger         { return vkLogger{v.l.With("err", err)} }
func (v vkLogger) WithFields(f log.Fields) log.Logger {
	args := make([]any, 0, 2*len(f))
	for k, val := range f {
		args = append(args, k, val)
	}
	return vkLogger{v.l.With(args...)}
}
