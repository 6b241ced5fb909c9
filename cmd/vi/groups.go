package main

import (
	"context"
	"fmt"
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

// imageGroups returns one group per pixel row ("row0", ...), column
// ("col0", ...) or RxC patch (by "patchRxC": "p0_0", "p0_1", ..., the
// patches tiling the image row by row from the top left, those at the
// right and bottom edges smaller where R or C does not divide the image)
// of the HxW image (--image) whose pixels are the data's features in
// row-major order.
func imageGroups(d *dataio.Dataset, target, image, by string) ([]dataio.Group, error) {
	h, w, err := cnn.ParseImage(image) // H*W bounded, without overflow
	if image == "" || err != nil {
		return nil, framework.Usagef("--groups %s needs --image HxW (the features are the pixels of an image, at most %d), got --image %q", by, cnn.MaxPixels, image)
	}
	var ph, pw int
	if strings.HasPrefix(by, "patch") {
		if n, err := fmt.Sscanf(by, "patch%dx%d", &ph, &pw); err != nil || n != 2 || ph < 1 || pw < 1 || ph > h || pw > w || by != fmt.Sprintf("patch%dx%d", ph, pw) {
			return nil, framework.Usagef("--groups %s: want patchRxC with 1 <= R <= %d and 1 <= C <= %d (the --image is %dx%d), e.g. patch2x2", by, h, w, h, w)
		}
	}
	j := len(d.Names) - 1
	if target != "" {
		var err error
		if j, err = d.Column(target); err != nil {
			return nil, err
		}
	}
	var feats []string
	for k, n := range d.Names {
		if k != j {
			feats = append(feats, n)
		}
	}
	if len(feats) != h*w {
		return nil, framework.Usagef("--groups %s: --image %dx%d has %d pixels but %s has %d features", by, h, w, h*w, d.Source, len(feats))
	}
	if ph > 0 {
		return dataio.ImagePatches(feats, h, w, ph, pw), nil
	}
	outer, inner, name := h, w, "row"
	if by == "cols" {
		outer, inner, name = w, h, "col"
	}
	groups := make([]dataio.Group, outer)
	for a := 0; a < outer; a++ {
		groups[a].Name = fmt.Sprintf("%s%d", name, a)
		for b := 0; b < inner; b++ {
			pix := a*w + b // row a, column b
			if by == "cols" {
				pix = b*w + a // row b, column a
			}
			groups[a].Columns = append(groups[a].Columns, feats[pix])
		}
	}
	return groups, nil
}
