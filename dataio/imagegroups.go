package dataio

import (
	"fmt"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// ImageGroups returns one group per pixel row ("row0", ...), column
// ("col0", ...) or RxC patch (by "patchRxC": "p0_0", "p0_1", ..., see
// ImagePatches) of the h x w image whose pixels are d's features (every
// column but target, or but the last) in row-major order. by is "rows",
// "cols" or "patchRxC"; a patch larger than the image, and an image of
// another number of pixels than d has features, are usage errors, worded
// as vi's --groups and --image.
func ImageGroups(d *Dataset, target string, h, w int, by string) ([]Group, error) {
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
		return ImagePatches(feats, h, w, ph, pw), nil
	}
	outer, inner, name := h, w, "row"
	if by == "cols" {
		outer, inner, name = w, h, "col"
	}
	groups := make([]Group, outer)
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
