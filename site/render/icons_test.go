package render

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"image/png"
	"maps"
	"slices"
	"testing"
)

// TestIcons decodes every icon: the PNGs at their sizes with the check mark
// white on blue, the ICO holding the 32 px PNG, the SVG as XML.
func TestIcons(t *testing.T) {
	files := icons()
	if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, iconPaths) {
		t.Fatalf("icons drawn %q, planned %q", got, iconPaths)
	}
	for name, size := range map[string]int{"favicon-32.png": 32, "apple-touch-icon.png": 180, "icon-512.png": 512} {
		img, err := png.Decode(bytes.NewReader(files[name]))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != size || b.Dy() != size {
			t.Errorf("%s is %dx%d, want %d", name, b.Dx(), b.Dy(), size)
		}
		// Grid point (27, 43) is on the check mark; (8, 56) is blue; the
		// corner is outside the rounded square.
		at := func(x, y float64) (r, g, b, a uint32) {
			return img.At(int(x*float64(size)/iconGrid), int(y*float64(size)/iconGrid)).RGBA()
		}
		if r, g, b, _ := at(27, 42); r>>8 < 240 || g>>8 < 240 || b>>8 < 240 {
			t.Errorf("%s: the check mark is not white", name)
		}
		if r, g, b, a := at(8, 56); r>>8 != uint32(iconBlue.R) || g>>8 != uint32(iconBlue.G) || b>>8 != uint32(iconBlue.B) || a>>8 != 255 {
			t.Errorf("%s: the square is not blue", name)
		}
		if _, _, _, a := at(0.2, 0.2); a != 0 {
			t.Errorf("%s: the corner is not transparent", name)
		}
	}
	ico := files["favicon.ico"]
	var head struct {
		Reserved, Type, Count uint16
		Width, Height         uint8
		_                     [2]uint8
		Planes, Bits          uint16
		Size, Offset          uint32
	}
	if err := binary.Read(bytes.NewReader(ico), binary.LittleEndian, &head); err != nil {
		t.Fatal(err)
	}
	if head.Type != 1 || head.Count != 1 || head.Width != 32 || int(head.Offset)+int(head.Size) != len(ico) || !bytes.Equal(ico[head.Offset:], files["favicon-32.png"]) {
		t.Errorf("favicon.ico: header %+v, %d bytes", head, len(ico))
	}
	if err := xml.Unmarshal(files["favicon.svg"], new(struct{})); err != nil {
		t.Errorf("favicon.svg: %v", err)
	}
}
