// Package service defines the lifecycle every long-running part of cpesuite
// follows (model: dskit services): start until ready, run until the context
// ends or the service fails, then stop within a deadline.
//
// Servers, schedulers, dispatchers and timers are all services, so one
// manager can start them in dependency order, notice the first failure and
// stop everything in reverse order.
package service

import (
	"context"
	"errors"
	"time"
)

// Service is a component with a three-phase lifecycle.
type Service interface {
	// Start prepares the service and returns once it is ready (a listener is
	// bound, a connection is open). An error means the service never ran.
	Start(ctx context.Context) error
	// Run blocks until ctx is cancelled, returning nil, or until the
	// service fails, returning the failure.
	Run(ctx context.Context) error
	// Stop releases what Start acquired. It is called once, after Run has
	// returned (or after a failed Start), with a context that carries the
	// stop deadline.
	Stop(ctx context.Context) error
}

// Funcs builds a Service from plain functions; nil functions do nothing,
// and a nil RunFn waits for the context.
type Funcs struct {
	StartFn func(ctx context.Context) error
	RunFn   func(ctx context.Context) error
	StopFn  func(ctx context.Context) error
}

// Start implements Service.
func (f Funcs) Start(ctx context.Context) error {
	if f.StartFn == nil {
		return nil
	}
	return f.StartFn(ctx)
}

// Run implements Service.
func (f Funcs) Run(ctx context.Context) error {
	if f.RunFn == nil {
		<-ctx.Done()
		return nil
	}
	return f.RunFn(ctx)
}

// Stop implements Service.
func (f Funcs) Stop(ctx context.Context) error {
	if f.StopFn == nil {
		return nil
	}
	return f.StopFn(ctx)
}

// Timer returns a service that calls fn every interval until its context
// ends. An error from fn fails the service; callers that want to survive a
// failed iteration log it and return nil.
func Timer(interval time.Duration, fn func(ctx context.Context) error) Service {
	return Funcs{RunFn: func(ctx context.Context) error {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				if err := fn(ctx); err != nil {
					return err
				}
			}
		}
	}}
}

// Group runs several services as one: started in order, run concurrently,
// stopped in reverse order. A module made of a server and its background
// loops is one Group.
type Group []Service

// Start implements Service. On failure the members already started are
// stopped before the error is returned.
func (g Group) Start(ctx context.Context) error {
	for i, s := range g {
		if err := s.Start(ctx); err != nil {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			for j := i - 1; j >= 0; j-- {
				_ = g[j].Stop(stopCtx)
			}
			return err
		}
	}
	return nil
}

// Run implements Service: the first member to fail fails the group, and
// the others are then asked to return.
func (g Group) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(g))
	for _, s := range g {
		go func() { errc <- s.Run(ctx) }()
	}
	var first error
	for range g {
		if err := <-errc; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	return first
}

// Stop implements Service, in reverse order, joining the errors.
func (g Group) Stop(ctx context.Context) error {
	var errs []error
	for i := len(g) - 1; i >= 0; i-- {
		errs = append(errs, g[i].Stop(ctx))
	}
	return errors.Join(errs...)
}
