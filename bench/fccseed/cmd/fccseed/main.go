// Command fccseed fills the ACS device tables of a database with the
// deterministic benchmark dataset of package fccseed.
//
//	go run ./bench/fccseed/cmd/fccseed -dialect sqlite -dsn /tmp/fccbench.db
//	go run ./bench/fccseed/cmd/fccseed -dialect postgres \
//	    -dsn 'postgres://postgres@127.0.0.1:5432/fccbench?sslmode=disable' -reset
//
// It migrates the ACS tables first, refuses a database that already holds
// devices unless -reset is given, prints progress, and ends with the
// elapsed time and the rate in devices per second.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"cpesuite/bench/fccseed"
	"cpesuite/internal/platform/sqlstore"
)

func main() {
	dialect := flag.String("dialect", "sqlite", "sqlite or postgres")
	dsn := flag.String("dsn", "", "SQLite file path or PostgreSQL URL (required)")
	devices := flag.Int("devices", fccseed.DefaultDevices, "devices to create")
	models := flag.Int("models", fccseed.DefaultModels, "product classes (models)")
	manufacturers := flag.Int("manufacturers", fccseed.DefaultManufacturers, "manufacturers")
	domains := flag.Int("domains", fccseed.DefaultDomains, "domains under Root")
	online := flag.Float64("online", fccseed.DefaultOnlineRatio, "share of online devices")
	seed := flag.Int64("seed", 1, "random seed; the same flags give the same rows")
	reset := flag.Bool("reset", false, "delete the seeded tables' rows first")
	flag.Parse()

	spec := fccseed.Spec{Devices: *devices, Models: *models, Manufacturers: *manufacturers,
		Domains: *domains, Seed: *seed, OnlineRatio: *online}
	if err := run(*dialect, *dsn, spec, *reset); err != nil {
		fmt.Fprintln(os.Stderr, "fccseed:", err)
		os.Exit(1)
	}
}

func run(dialect, dsn string, spec fccseed.Spec, reset bool) error {
	if dsn == "" {
		return fmt.Errorf("-dsn is required")
	}
	if err := spec.Validate(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var (
		db  *sqlstore.DB
		err error
	)
	switch dialect {
	case "sqlite":
		db, err = sqlstore.OpenSQLiteFile(ctx, dsn)
	case "postgres":
		db, err = sqlstore.Open(ctx, sqlstore.Config{Dialect: sqlstore.Postgres, DSN: dsn})
	default:
		return fmt.Errorf("-dialect must be sqlite or postgres, not %q", dialect)
	}
	if err != nil {
		return err
	}
	defer db.Close()

	if reset {
		start := time.Now()
		if err := fccseed.Reset(ctx, db); err != nil {
			return err
		}
		fmt.Printf("reset in %s\n", time.Since(start).Round(time.Millisecond))
	}

	start := time.Now()
	next := time.Now()
	progress := func(done int) {
		// At most one line a second: the loaders report every batch.
		if now := time.Now(); now.After(next) || done == spec.Devices {
			next = now.Add(time.Second)
			fmt.Printf("%10d devices  %6.1fs\n", done, now.Sub(start).Seconds())
		}
	}
	if err := fccseed.Seed(ctx, db, spec, progress); err != nil {
		return err
	}
	elapsed := time.Since(start)
	c := spec.Counts()
	fmt.Printf("seeded %d devices (%d distinct serials, %d duplicates, %d without model) on %s in %s: %.0f devices/s (load, index and ANALYZE)\n",
		c.Devices, c.Distinct, c.Duplicates, c.Orphans, dialect, elapsed.Round(time.Millisecond), float64(c.Devices)/elapsed.Seconds())
	return nil
}
