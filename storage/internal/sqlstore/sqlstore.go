// Package sqlstore is the storage.Store both SQL backends share: the
// queries are written once in the common subset of SQLite and PostgreSQL
// (ON CONFLICT, RETURNING), and a Dialect supplies what differs
// (placeholders, the write/read pools). Times are stored as Unix
// microseconds in UTC so both databases sort and compare them the same way.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/storage"
	"phonepilot/tools"
)

// Dialect is what differs between the databases.
type Dialect struct {
	// Numbered makes placeholders $1, $2… (PostgreSQL) instead of ?.
	Numbered bool
}

// Store implements storage.Store over database/sql.
type Store struct {
	write *sql.DB // writes (SQLite: one connection, so writers queue in Go, not in busy waits)
	read  *sql.DB // reads (may be the same pool)
	d     Dialect
	close func() error
}

var _ storage.Store = (*Store)(nil)

// New wraps open pools. close releases them.
func New(write, read *sql.DB, d Dialect, close func() error) *Store {
	if read == nil {
		read = write
	}
	return &Store{write: write, read: read, d: d, close: close}
}

// Close releases the pools.
func (s *Store) Close() error { return s.close() }

// q rewrites ? placeholders for the dialect.
func (s *Store) q(query string) string {
	if !s.d.Numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func us(t time.Time) int64 { return t.UnixMicro() }

func fromUS(v int64) time.Time { return time.UnixMicro(v).UTC() }

func nullUS(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func fromNullUS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromUS(v.Int64)
	return &t
}

func jsonOr(raw json.RawMessage, empty string) string {
	if len(raw) == 0 {
		return empty
	}
	return string(raw)
}

// taskColumns are what a list reads; a single task adds final_scene.
const taskColumns = `id, goal, device, planner, max_steps, status, cause, reason, owner, created_us, started_us, finished_us,
	input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, model_latency_ns, tokens_estimated, config, pending, waited_ns, seq`

type scanner interface{ Scan(dest ...any) error }

func scanTask(r scanner, withScene bool) (storage.Task, int64, error) {
	var (
		t                 storage.Task
		started, finished sql.NullInt64
		created, seq      int64
		latency, waited   int64
		config, final     string
		pending           string
	)
	dest := []any{&t.ID, &t.Goal, &t.Device, &t.Planner, &t.MaxSteps, &t.Status, &t.Cause, &t.Reason, &t.Owner, &created, &started, &finished,
		&t.Usage.InputTokens, &t.Usage.CacheReadTokens, &t.Usage.CacheWriteTokens, &t.Usage.OutputTokens, &latency, &t.Usage.Estimated, &config, &pending, &waited, &seq}
	if withScene {
		dest = append(dest, &final)
	}
	if err := r.Scan(dest...); err != nil {
		return storage.Task{}, 0, err
	}
	t.Created = fromUS(created)
	t.Started = fromNullUS(started)
	t.Finished = fromNullUS(finished)
	t.Usage.Latency = time.Duration(latency)
	t.Waited = time.Duration(waited)
	if config != "" && config != "{}" {
		t.Config = json.RawMessage(config)
	}
	if final != "" && final != "null" {
		t.FinalScene = json.RawMessage(final)
	}
	if pending != "" && pending != "null" {
		var p storage.Pending
		if err := json.Unmarshal([]byte(pending), &p); err != nil {
			return storage.Task{}, 0, fmt.Errorf("task %s: pending: %w", t.ID, err)
		}
		t.Pending = &p
	}
	return t, seq, nil
}

// CreateTask stores a new task.
func (s *Store) CreateTask(ctx context.Context, t storage.Task) (storage.Task, error) {
	t, query, args, err := s.InsertTask(t)
	if err != nil {
		return storage.Task{}, err
	}
	if _, err := s.write.ExecContext(ctx, query, args...); err != nil {
		return storage.Task{}, fmt.Errorf("create task: %w", err)
	}
	return s.Task(ctx, t.ID)
}

// InsertTask checks and completes a new task as CreateTask does and returns
// the INSERT that stores it, in this dialect, so that a caller can run it
// inside its own transaction (a farm queues the task's job in the same one).
func (s *Store) InsertTask(t storage.Task) (storage.Task, string, []any, error) {
	if t.ID == "" {
		t.ID = storage.NewID()
	}
	if t.Status == "" {
		t.Status = lifecycle.Queued
	}
	if !t.Status.Valid() {
		return storage.Task{}, "", nil, fmt.Errorf("create task: unknown status %q", t.Status)
	}
	pending := "null"
	if t.Pending != nil {
		if err := t.Pending.Validate(); err != nil {
			return storage.Task{}, "", nil, fmt.Errorf("create task: %w", err)
		}
		b, err := json.Marshal(t.Pending)
		if err != nil {
			return storage.Task{}, "", nil, fmt.Errorf("create task: %w", err)
		}
		pending = string(b)
	}
	if t.Created.IsZero() {
		t.Created = time.Now()
	}
	if len(t.Config) > 0 && !json.Valid(t.Config) {
		return storage.Task{}, "", nil, errors.New("create task: config is not valid JSON")
	}
	t.Created = t.Created.Truncate(time.Microsecond).UTC()
	if len(t.FinalScene) > 0 && !json.Valid(t.FinalScene) {
		return storage.Task{}, "", nil, errors.New("create task: final scene is not valid JSON")
	}
	query := s.q(`INSERT INTO tasks (id, goal, device, planner, max_steps, status, cause, reason, owner,
		created_us, started_us, finished_us, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, model_latency_ns,
		tokens_estimated, config, final_scene, pending)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	args := []any{t.ID, t.Goal, t.Device, t.Planner, t.MaxSteps, string(t.Status), string(t.Cause), t.Reason, t.Owner,
		us(t.Created), nullUS(t.Started), nullUS(t.Finished),
		t.Usage.InputTokens, t.Usage.CacheReadTokens, t.Usage.CacheWriteTokens, t.Usage.OutputTokens, int64(t.Usage.Latency), t.Usage.Estimated, jsonOr(t.Config, "{}"), jsonOr(t.FinalScene, "null"), pending}
	return t, query, args, nil
}

// Task returns one task.
func (s *Store) Task(ctx context.Context, id string) (storage.Task, error) {
	t, _, err := scanTask(s.read.QueryRowContext(ctx, s.q(`SELECT `+taskColumns+`, final_scene FROM tasks WHERE id = ?`), id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return storage.Task{}, fmt.Errorf("task %q: %w", id, storage.ErrNotFound)
	}
	if err != nil {
		return storage.Task{}, fmt.Errorf("get task: %w", err)
	}
	return t, nil
}

// ListTasks returns a page of tasks, newest first. The cursor is the
// insertion sequence of the last task on the previous page.
func (s *Store) ListTasks(ctx context.Context, q storage.Query) (storage.Page, error) {
	limit := q.Limit
	switch {
	case limit == 0:
		limit = storage.DefaultPage
	case limit < 0 || limit > storage.MaxPage:
		return storage.Page{}, fmt.Errorf("list tasks: limit %d outside 1..%d", limit, storage.MaxPage)
	}
	if q.Status != "" && !q.Status.Valid() {
		return storage.Page{}, fmt.Errorf("list tasks: unknown status %q", q.Status)
	}
	var (
		where []string
		args  []any
	)
	if q.Status != "" {
		where = append(where, "status = ?")
		args = append(args, q.Status)
	}
	if q.Cursor != "" {
		c, err := strconv.ParseInt(q.Cursor, 10, 64)
		if err != nil || c <= 0 {
			return storage.Page{}, fmt.Errorf("list tasks: bad cursor %q", q.Cursor)
		}
		where = append(where, "seq < ?")
		args = append(args, c)
	}
	query := `SELECT ` + taskColumns + ` FROM tasks`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY seq DESC LIMIT ?"
	args = append(args, limit+1)
	rows, err := s.read.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return storage.Page{}, fmt.Errorf("list tasks: %w", err)
	}
	defer rows.Close()
	page := storage.Page{Tasks: []storage.Task{}}
	var lastSeq int64
	for rows.Next() {
		t, seq, err := scanTask(rows, false)
		if err != nil {
			return storage.Page{}, fmt.Errorf("list tasks: %w", err)
		}
		if len(page.Tasks) == limit {
			page.Next = strconv.FormatInt(lastSeq, 10)
			break
		}
		page.Tasks = append(page.Tasks, t)
		lastSeq = seq
	}
	if err := rows.Err(); err != nil {
		return storage.Page{}, fmt.Errorf("list tasks: %w", err)
	}
	return page, nil
}

// FindTasks returns the tasks whose ID starts with prefix, newest first, at
// most limit of them. IDs are lower-case base32, so a prefix with any other
// character matches nothing (and cannot reach LIKE as a pattern).
func (s *Store) FindTasks(ctx context.Context, prefix string, limit int) ([]storage.Task, error) {
	if limit < 1 || limit > storage.MaxPage {
		return nil, fmt.Errorf("find tasks: limit %d outside 1..%d", limit, storage.MaxPage)
	}
	out := []storage.Task{}
	if prefix == "" || strings.IndexFunc(prefix, func(r rune) bool { return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z') }) >= 0 {
		return out, nil
	}
	rows, err := s.read.QueryContext(ctx, s.q(`SELECT `+taskColumns+` FROM tasks WHERE id LIKE ? ORDER BY seq DESC LIMIT ?`), prefix+"%", limit)
	if err != nil {
		return nil, fmt.Errorf("find tasks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		t, _, err := scanTask(rows, false)
		if err != nil {
			return nil, fmt.Errorf("find tasks: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find tasks: %w", err)
	}
	return out, nil
}

// UpdateStatus applies a status change if the task is in one of c.From.
func (s *Store) UpdateStatus(ctx context.Context, id string, c storage.Change) (storage.Task, error) {
	if err := c.Validate(); err != nil {
		return storage.Task{}, fmt.Errorf("update task %s: %w", id, err)
	}
	at := us(c.At)
	terminal := c.To.Terminal()
	pending := "null"
	if c.Pending != nil {
		b, err := json.Marshal(c.Pending)
		if err != nil {
			return storage.Task{}, fmt.Errorf("update task %s: %w", id, err)
		}
		pending = string(b)
	}
	set := []string{"status = ?", "reason = ?", "pending = ?"}
	args := []any{c.To, c.Reason, pending}
	if c.To == lifecycle.Running {
		// A task resuming after it waited for a person keeps its start:
		// its run took the whole time, the wait included (it showed
		// "took 0s" when the resume overwrote it).
		set = append(set, "started_us = CASE WHEN started_us IS NOT NULL AND status IN (?, ?) THEN started_us ELSE ? END")
		args = append(args, lifecycle.WaitingApproval, lifecycle.WaitingUser, at)
	}
	// A wait for a person that ends adds its time to waited_ns; a new one
	// notes when it began (the SET reads the row as it was).
	set = append(set, "waited_ns = waited_ns + CASE WHEN status IN (?, ?) AND waiting_us IS NOT NULL THEN (? - waiting_us) * 1000 ELSE 0 END")
	args = append(args, lifecycle.WaitingApproval, lifecycle.WaitingUser, at)
	if c.To.Waiting() {
		set = append(set, "waiting_us = ?")
		args = append(args, at)
	} else {
		set = append(set, "waiting_us = NULL")
	}
	if c.Owner != "" {
		set = append(set, "owner = ?")
		args = append(args, c.Owner)
	}
	if terminal {
		set = append(set, "finished_us = ?", "cause = ?", "input_tokens = ?", "cache_read_tokens = ?", "cache_write_tokens = ?",
			"output_tokens = ?", "model_latency_ns = ?", "tokens_estimated = ?")
		args = append(args, at, c.Cause, c.Usage.InputTokens, c.Usage.CacheReadTokens, c.Usage.CacheWriteTokens,
			c.Usage.OutputTokens, int64(c.Usage.Latency), c.Usage.Estimated)
		if len(c.FinalScene) > 0 {
			set = append(set, "final_scene = ?")
			args = append(args, string(c.FinalScene))
		}
		if len(c.Config) > 0 {
			set = append(set, "config = ?")
			args = append(args, string(c.Config))
		}
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(c.From)), ", ")
	args = append(args, id)
	for _, f := range c.From {
		args = append(args, f)
	}
	owned := ""
	if c.IfOwner != "" {
		owned = " AND owner = ?"
		args = append(args, c.IfOwner)
	}
	res, err := s.write.ExecContext(ctx, s.q(`UPDATE tasks SET `+strings.Join(set, ", ")+` WHERE id = ? AND status IN (`+in+`)`+owned), args...)
	if err != nil {
		return storage.Task{}, fmt.Errorf("update task %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return storage.Task{}, fmt.Errorf("update task %s: %w", id, err)
	}
	t, err := s.Task(ctx, id)
	if err != nil {
		return storage.Task{}, err
	}
	if n == 0 {
		return t, &storage.ConflictError{ID: id, Current: t.Status, To: c.To}
	}
	return t, nil
}

// MarkInterrupted ends the running tasks of owners as interrupted.
func (s *Store) MarkInterrupted(ctx context.Context, owners []string, reason string, at time.Time) ([]string, error) {
	ids := []string{}
	if len(owners) == 0 {
		return ids, nil
	}
	marks := func(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }
	active := lifecycle.ActiveStatuses()
	args := []any{lifecycle.Interrupted, lifecycle.CauseInterrupted, reason, us(at), us(at)}
	for _, st := range active {
		args = append(args, st)
	}
	for _, o := range owners {
		args = append(args, o)
	}
	rows, err := s.write.QueryContext(ctx, s.q(`UPDATE tasks SET status = ?, cause = ?, reason = ?, finished_us = ?, pending = 'null',
		waited_ns = waited_ns + CASE WHEN waiting_us IS NOT NULL THEN (? - waiting_us) * 1000 ELSE 0 END, waiting_us = NULL
		WHERE status IN (`+marks(len(active))+`) AND owner IN (`+marks(len(owners))+`) RETURNING id`), args...)
	if err != nil {
		return nil, fmt.Errorf("mark interrupted: %w", err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("mark interrupted: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mark interrupted: %w", err)
	}
	return ids, nil
}

// SaveStep stores (or replaces) a finished step.
func (s *Store) SaveStep(ctx context.Context, st storage.Step) error {
	if st.Number < 0 {
		return fmt.Errorf("save step: negative number %d", st.Number)
	}
	if len(st.Scene) > 0 && !json.Valid(st.Scene) {
		return fmt.Errorf("save step %d: scene is not valid JSON", st.Number)
	}
	if len(st.Call.Args) > 0 && !json.Valid(st.Call.Args) {
		return fmt.Errorf("save step %d: tool arguments are not valid JSON", st.Number)
	}
	attempts, err := json.Marshal(orEmpty(st.Attempts))
	if err != nil {
		return fmt.Errorf("save step %d: %w", st.Number, err)
	}
	var started int64
	if !st.Started.IsZero() {
		started = us(st.Started)
	}
	_, err = s.write.ExecContext(ctx, s.q(`INSERT INTO steps (task_id, number, intent, tool, args, status, reason, attempts,
		before_fp, after_fp, changed, started_us, duration_ns, input_tokens, cache_read_tokens, cache_write_tokens,
		output_tokens, model_latency_ns, tokens_estimated, scene)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (task_id, number) DO UPDATE SET intent = excluded.intent, tool = excluded.tool, args = excluded.args,
		status = excluded.status, reason = excluded.reason, attempts = excluded.attempts, before_fp = excluded.before_fp,
		after_fp = excluded.after_fp, changed = excluded.changed, started_us = excluded.started_us,
		duration_ns = excluded.duration_ns, input_tokens = excluded.input_tokens,
		cache_read_tokens = excluded.cache_read_tokens, cache_write_tokens = excluded.cache_write_tokens, output_tokens = excluded.output_tokens,
		model_latency_ns = excluded.model_latency_ns, tokens_estimated = excluded.tokens_estimated, scene = excluded.scene`),
		st.TaskID, st.Number, st.Intent, st.Call.Name, jsonOr(st.Call.Args, "{}"), st.Status, st.Reason, string(attempts),
		st.Before, st.After, st.Changed, started, int64(st.Duration),
		st.Usage.InputTokens, st.Usage.CacheReadTokens, st.Usage.CacheWriteTokens, st.Usage.OutputTokens,
		int64(st.Usage.Latency), st.Usage.Estimated, jsonOr(st.Scene, "null"))
	if err != nil {
		if isForeignKey(err) {
			return fmt.Errorf("save step %d: task %q: %w", st.Number, st.TaskID, storage.ErrNotFound)
		}
		return fmt.Errorf("save step %d: %w", st.Number, err)
	}
	return nil
}

func orEmpty(a []plan.Attempt) []plan.Attempt {
	if a == nil {
		return []plan.Attempt{}
	}
	return a
}

// isForeignKey recognises a foreign-key violation in either database's words.
func isForeignKey(err error) bool {
	m := strings.ToLower(err.Error())
	return strings.Contains(m, "foreign key") || strings.Contains(m, "23503")
}

const stepColumns = `task_id, number, intent, tool, args, status, reason, attempts, before_fp, after_fp, changed,
	started_us, duration_ns, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, model_latency_ns, tokens_estimated, scene`

func scanStep(r scanner) (storage.Step, error) {
	var (
		st                    storage.Step
		args, attempts, scene string
		started, dur, latency int64
	)
	err := r.Scan(&st.TaskID, &st.Number, &st.Intent, &st.Call.Name, &args, &st.Status, &st.Reason, &attempts,
		&st.Before, &st.After, &st.Changed, &started, &dur, &st.Usage.InputTokens,
		&st.Usage.CacheReadTokens, &st.Usage.CacheWriteTokens, &st.Usage.OutputTokens, &latency, &st.Usage.Estimated, &scene)
	if err != nil {
		return storage.Step{}, err
	}
	st.Call = tools.Call{Name: st.Call.Name, Args: json.RawMessage(args)}
	if err := json.Unmarshal([]byte(attempts), &st.Attempts); err != nil {
		return storage.Step{}, fmt.Errorf("step %d attempts: %w", st.Number, err)
	}
	if started != 0 {
		st.Started = fromUS(started)
	}
	st.Duration = time.Duration(dur)
	st.Usage.Latency = time.Duration(latency)
	if scene != "" && scene != "null" {
		st.Scene = json.RawMessage(scene)
	}
	return st, nil
}

// Steps returns a task's steps in order.
func (s *Store) Steps(ctx context.Context, taskID string) ([]storage.Step, error) {
	if _, err := s.Task(ctx, taskID); err != nil {
		return nil, err
	}
	rows, err := s.read.QueryContext(ctx, s.q(`SELECT `+stepColumns+` FROM steps WHERE task_id = ? ORDER BY number`), taskID)
	if err != nil {
		return nil, fmt.Errorf("steps: %w", err)
	}
	defer rows.Close()
	out := []storage.Step{}
	for rows.Next() {
		st, err := scanStep(rows)
		if err != nil {
			return nil, fmt.Errorf("steps: %w", err)
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("steps: %w", err)
	}
	return out, nil
}

// Step returns one step.
func (s *Store) Step(ctx context.Context, taskID string, number int) (storage.Step, error) {
	st, err := scanStep(s.read.QueryRowContext(ctx, s.q(`SELECT `+stepColumns+` FROM steps WHERE task_id = ? AND number = ?`), taskID, number))
	if errors.Is(err, sql.ErrNoRows) {
		return storage.Step{}, fmt.Errorf("task %q step %d: %w", taskID, number, storage.ErrNotFound)
	}
	if err != nil {
		return storage.Step{}, fmt.Errorf("step: %w", err)
	}
	return st, nil
}

// AppendEvent stores e as the task's next event. The task row's counter
// hands out the sequence number, so concurrent appends never collide.
func (s *Store) AppendEvent(ctx context.Context, e storage.Event) (storage.Event, error) {
	if e.Type == "" {
		return storage.Event{}, errors.New("append event: empty type")
	}
	if len(e.Data) > 0 && !json.Valid(e.Data) {
		return storage.Event{}, fmt.Errorf("append event %s: data is not valid JSON", e.Type)
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.Truncate(time.Microsecond).UTC()
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return storage.Event{}, fmt.Errorf("append event: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	err = tx.QueryRowContext(ctx, s.q(`UPDATE tasks SET last_event = last_event + 1 WHERE id = ? RETURNING last_event`), e.TaskID).Scan(&e.Seq)
	if errors.Is(err, sql.ErrNoRows) {
		return storage.Event{}, fmt.Errorf("append event: task %q: %w", e.TaskID, storage.ErrNotFound)
	}
	if err != nil {
		return storage.Event{}, fmt.Errorf("append event: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO events (task_id, seq, type, step, time_us, data) VALUES (?, ?, ?, ?, ?, ?)`),
		e.TaskID, e.Seq, e.Type, e.Step, us(e.Time), jsonOr(e.Data, "{}")); err != nil {
		return storage.Event{}, fmt.Errorf("append event: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return storage.Event{}, fmt.Errorf("append event: %w", err)
	}
	return e, nil
}

// Events returns events after a sequence number.
func (s *Store) Events(ctx context.Context, taskID string, after int64, limit int) ([]storage.Event, error) {
	if _, err := s.Task(ctx, taskID); err != nil {
		return nil, err
	}
	query := `SELECT task_id, seq, type, step, time_us, data FROM events WHERE task_id = ? AND seq > ? ORDER BY seq`
	args := []any{taskID, after}
	if limit > 0 {
		query += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := s.read.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	defer rows.Close()
	out := []storage.Event{}
	for rows.Next() {
		var (
			e    storage.Event
			at   int64
			data string
		)
		if err := rows.Scan(&e.TaskID, &e.Seq, &e.Type, &e.Step, &at, &data); err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		e.Time = fromUS(at)
		if data != "" && data != "{}" {
			e.Data = json.RawMessage(data)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return out, nil
}
