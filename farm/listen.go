package farm

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// listen holds one connection that LISTENs on channels and calls fn for
// each notification, until ctx ends. A lost connection is dialled again
// (backoff up to 5 s); onConnect runs after each (re)connection, so the
// caller can catch up on what it may have missed meanwhile.
func listen(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger, channels []string,
	fn func(channel, payload string), onConnect func()) {
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := listenOnce(ctx, pool, channels, fn, func() {
			wait = 100 * time.Millisecond
			if onConnect != nil {
				onConnect()
			}
		})
		if ctx.Err() != nil {
			return
		}
		log.Warn("farm: LISTEN connection lost; dialling again", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func listenOnce(ctx context.Context, pool *pgxpool.Pool, channels []string, fn func(string, string), connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	connected()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Channel, n.Payload)
	}
}
