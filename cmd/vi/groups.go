package main

import (
	"context"
	"strings"

	"github.com/lazyvi/lazyvi/backends/cnn"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

// groupFlags reads --groups and --groups-file ("-": standard input):
// explicit groups, and whether to group one-hot columns.
func groupFlags(ctx context.Context, spec, file string) ([]dataio.Group, bool, error) {
	var groups []dataio.Group
	onehot := false
	switch g := strings.TrimSpace(spec); {
	case g == "":
	case strings.EqualFold(g, "onehot"):
		onehot = true
	case isImageGrouping(g):
		// imageGroups builds them once the data's columns are known.
	default:
		gs, err := dataio.ParseGroups(g)
		if err != nil {
			return nil, false, framework.Usagef("--groups: %w", err)
		}
		groups = gs
	}
	if file != "" {
		gs, err := dataio.LoadGroups(ctx, file)
		if err != nil {
			return nil, false, runError(ctx, err)
		}
		groups = append(groups, gs...)
	}
	return groups, onehot, nil
}

// isImageGrouping reports whether the --groups value g is one of the
// groupings of an image's pixels: rows, cols or patchRxC.
func isImageGrouping(g string) bool {
	g = strings.ToLower(g)
	return g == "rows" || g == "cols" || strings.HasPrefix(g, "patch")
}

// imageGroups returns the groups of the HxW image (--image) whose pixels
// are the data's features, by rows, cols or patchRxC
// (dataio.ImageGroups).
func imageGroups(d *dataio.Dataset, target, image, by string) ([]dataio.Group, error) {
	h, w, err := cnn.ParseImage(image) // H*W bounded, without overflow
	if image == "" || err != nil {
		return nil, framework.Usagef("--groups %s needs --image HxW (the features are the pixels of an image, at most %d), got --image %q", by, cnn.MaxPixels, image)
	}
	return dataio.ImageGroups(d, target, h, w, by)
}
