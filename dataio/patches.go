package dataio

import "fmt"

// ImagePatches returns the ph x pw patches of the h x w image whose pixels
// are feats in row-major order: groups p<R>_<C> tiling the image row by
// row from the top left, those at the right and bottom edges smaller where
// ph or pw does not divide the image.
func ImagePatches(feats []string, h, w, ph, pw int) []Group {
	var groups []Group
	for r := 0; r*ph < h; r++ {
		for c := 0; c*pw < w; c++ {
			g := Group{Name: fmt.Sprintf("p%d_%d", r, c)}
			for i := r * ph; i < min((r+1)*ph, h); i++ {
				for j := c * pw; j < min((c+1)*pw, w); j++ {
					g.Columns = append(g.Columns, feats[i*w+j])
				}
			}
			groups = append(groups, g)
		}
	}
	return groups
}
