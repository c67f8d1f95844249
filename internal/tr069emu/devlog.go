package tr069emu

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// deviceLogs are the per-device log files, <dir>/<serial>.log, in slog's
// text format. A file is opened per write, so an idle device holds no file
// descriptor; one mutex per file keeps lines whole.
type deviceLogs struct {
	dir string
	mu  sync.Mutex
	fm  map[string]*sync.Mutex
}

func newDeviceLogs(dir string) (*deviceLogs, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &deviceLogs{dir: dir, fm: map[string]*sync.Mutex{}}, nil
}

func (l *deviceLogs) path(serial string) string { return filepath.Join(l.dir, serial+".log") }

func (l *deviceLogs) lock(serial string) *sync.Mutex {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.fm[serial]
	if m == nil {
		m = &sync.Mutex{}
		l.fm[serial] = m
	}
	return m
}

// fileWriter appends to one device's log.
type fileWriter struct {
	l      *deviceLogs
	serial string
}

func (w fileWriter) Write(p []byte) (int, error) {
	m := w.l.lock(w.serial)
	m.Lock()
	defer m.Unlock()
	f, err := os.OpenFile(w.l.path(w.serial), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := f.Write(p)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// Logger returns a logger writing to serial's file and, at warning level
// and above, to the process log too.
func (l *deviceLogs) Logger(serial string, process *slog.Logger) *slog.Logger {
	file := slog.NewTextHandler(fileWriter{l, serial}, &slog.HandlerOptions{Level: slog.LevelDebug})
	return slog.New(teeHandler{file, process.With("serial", serial).Handler()})
}

// teeHandler sends records to the file and warnings upward.
type teeHandler struct{ file, up slog.Handler }

func (h teeHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	return h.file.Enabled(ctx, lv) || h.up.Enabled(ctx, lv)
}

func (h teeHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.file.Handle(ctx, r)
	if r.Level >= slog.LevelWarn && h.up.Enabled(ctx, r.Level) {
		_ = h.up.Handle(ctx, r.Clone())
	}
	return err
}

func (h teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{h.file.WithAttrs(as), h.up.WithAttrs(as)}
}

func (h teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{h.file.WithGroup(name), h.up.WithGroup(name)}
}

// Open returns the log file for reading; 404 when there is none.
func (l *deviceLogs) Open(serial string) (*os.File, error) {
	f, err := os.Open(l.path(serial))
	if errors.Is(err, os.ErrNotExist) {
		return nil, notFound("no log for serial %s", serial)
	}
	return f, err
}

// LogStatistics are the counts of a device log.
type LogStatistics struct {
	TotalLines    int   `json:"totalLines"`
	FileSizeBytes int64 `json:"fileSizeBytes"`
	ErrorCount    int   `json:"errorCount"`
	WarnCount     int   `json:"warnCount"`
	InfoCount     int   `json:"infoCount"`
	DebugCount    int   `json:"debugCount"`
}

// Stats counts lines by level.
func (l *deviceLogs) Stats(serial string) (LogStatistics, error) {
	f, err := l.Open(serial)
	if err != nil {
		return LogStatistics{}, err
	}
	defer f.Close()
	var st LogStatistics
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			st.FileSizeBytes += int64(len(line))
			st.TotalLines++
			switch {
			case bytes.Contains(line, []byte(" level=ERROR")):
				st.ErrorCount++
			case bytes.Contains(line, []byte(" level=WARN")):
				st.WarnCount++
			case bytes.Contains(line, []byte(" level=INFO")):
				st.InfoCount++
			case bytes.Contains(line, []byte(" level=DEBUG")):
				st.DebugCount++
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if err == io.EOF {
				return st, nil
			}
			return st, err
		}
	}
}

// Content reads lines of the log. With from >= 0 it reads forward from that
// byte offset, at most lines lines; with from < 0 it returns the last lines
// lines. next is the offset to continue from.
func (l *deviceLogs) Content(serial string, lines int, from int64) (text []byte, next int64, err error) {
	f, err := l.Open(serial)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := st.Size()
	if from < 0 {
		// Tail: read backwards in blocks until enough newlines are seen.
		const block = 64 << 10
		var buf []byte
		pos := size
		for pos > 0 && bytes.Count(buf, []byte{'\n'}) <= lines {
			n := min(int64(block), pos)
			pos -= n
			chunk := make([]byte, n)
			if _, err := f.ReadAt(chunk, pos); err != nil && err != io.EOF {
				return nil, 0, err
			}
			buf = append(chunk, buf...)
		}
		all := bytes.SplitAfter(buf, []byte{'\n'})
		if len(all) > 0 && len(all[len(all)-1]) == 0 {
			all = all[:len(all)-1]
		}
		if pos > 0 && len(all) > 0 {
			all = all[1:] // a partial first line
		}
		next = size
		if n := len(all); n > 0 && !bytes.HasSuffix(all[n-1], []byte{'\n'}) {
			// A line still being written: leave it for the next read.
			next -= int64(len(all[n-1]))
			all = all[:n-1]
		}
		if len(all) > lines {
			all = all[len(all)-lines:]
		}
		return bytes.Join(all, nil), next, nil
	}
	if from > size {
		from = 0 // the log was cleared since the caller's last read
	}
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, 0, err
	}
	r := bufio.NewReader(f)
	var out bytes.Buffer
	next = from
	for i := 0; i < lines; i++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			out.Write(line)
			next += int64(len(line))
		}
		if err != nil {
			break // a line still being written is left for the next read
		}
	}
	return out.Bytes(), next, nil
}

// Clear empties the log; 404 when there is none.
func (l *deviceLogs) Clear(serial string) error {
	m := l.lock(serial)
	m.Lock()
	defer m.Unlock()
	if _, err := os.Stat(l.path(serial)); errors.Is(err, os.ErrNotExist) {
		return notFound("no log for serial %s", serial)
	}
	return os.Truncate(l.path(serial), 0)
}
