package kubelet

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/virtual-kubelet/virtual-kubelet/log"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// vkLogger adapts virtual-kubelet's logger interface to slog. Optimistic
// concurrency conflicts on pod status updates (the pod controller's lister
// lags behind its own last write, and it retries at once) are logged at
// debug level: they are routine, not errors.
type vkLogger struct {
	l        *slog.Logger
	conflict bool
}

var _ log.Logger = vkLogger{}

func (v vkLogger) emit(level slog.Level, msg string) {
	if v.conflict && level > slog.LevelDebug {
		level = slog.LevelDebug
	}
	v.l.Log(context.Background(), level, msg)
}

func (v vkLogger) Debug(a ...any)            { v.emit(slog.LevelDebug, fmt.Sprint(a...)) }
func (v vkLogger) Debugf(f string, a ...any) { v.emit(slog.LevelDebug, fmt.Sprintf(f, a...)) }
func (v vkLogger) Info(a ...any)             { v.emit(slog.LevelInfo, fmt.Sprint(a...)) }
func (v vkLogger) Infof(f string, a ...any)  { v.emit(slog.LevelInfo, fmt.Sprintf(f, a...)) }
func (v vkLogger) Warn(a ...any)             { v.emit(slog.LevelWarn, fmt.Sprint(a...)) }
func (v vkLogger) Warnf(f string, a ...any)  { v.emit(slog.LevelWarn, fmt.Sprintf(f, a...)) }
func (v vkLogger) Error(a ...any)            { v.emit(slog.LevelError, fmt.Sprint(a...)) }
func (v vkLogger) Errorf(f string, a ...any) { v.emit(slog.LevelError, fmt.Sprintf(f, a...)) }
func (v vkLogger) Fatal(a ...any)            { v.emit(slog.LevelError, fmt.Sprint(a...)) }
func (v vkLogger) Fatalf(f string, a ...any) { v.emit(slog.LevelError, fmt.Sprintf(f, a...)) }
func (v vkLogger) WithField(k string, val any) log.Logger {
	return vkLogger{v.l.With(k, val), v.conflict}
}
func (v vkLogger) WithError(err error) log.Logger {
	return vkLogger{v.l.With("err", err), v.conflict || apierrors.IsConflict(err)}
}
func (v vkLogger) WithFields(f log.Fields) log.Logger {
	args := make([]any, 0, 2*len(f))
	for k, val := range f {
		args = append(args, k, val)
	}
	conflict := v.conflict
	if err, ok := f["err"].(error); ok && apierrors.IsConflict(err) {
		conflict = true
	}
	return vkLogger{v.l.With(args...), conflict}
}
