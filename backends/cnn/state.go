package cnn

import (
	"context"

	"github.com/lazyvi/lazyvi/framework"
)

var _ framework.Persister = (*Model)(nil)

// SaveState implements framework.Persister (nn.State).
func (md *Model) SaveState(context.Context) ([]byte, error) { return md.trained.Encode("cnn", md.head) }

// LoadState implements framework.Persister: the model becomes the fitted
// model that saved the state (same options, so the same architecture).
func (md *Model) LoadState(_ context.Context, b []byte) error {
	if err := md.trained.Decode("cnn", &md.head, b, md.m, md.cfg.train.LR); err != nil {
		return err
	}
	md.memo.Clear()
	return nil
}
