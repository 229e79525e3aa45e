package render

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"slices"
	"sync"

	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/templates"
)

// The site's icon is a white check mark on a blue rounded square, drawn on a
// 64-unit grid. The SVG and the PNG sizes come from the same numbers; the
// PNGs are rasterised here, so no binary file is kept in the repository.
const (
	iconGrid   = 64.0
	iconRadius = 14.0
	iconStroke = 7.0
)

var (
	iconBlue  = color.NRGBA{0x0b, 0x5c, 0xad, 0xff}
	iconCheck = [][2]float64{{17, 33}, {27, 43}, {47, 21}}
)

// iconImagePath is the larger icon, the preview image of social cards.
const iconImagePath = "icon-512.png"

// iconSVG is the icon as SVG.
func iconSVG() []byte {
	return fmt.Appendf(nil, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %[1]g %[1]g">`+
		`<rect width="%[1]g" height="%[1]g" rx="%[2]g" fill="#%02[3]x%02[4]x%02[5]x"/>`+
		`<path d="M%[6]g %[7]gL%[8]g %[9]gL%[10]g %[11]g" fill="none" stroke="#fff" stroke-width="%[12]g" stroke-linecap="round" stroke-linejoin="round"/></svg>`+"\n",
		iconGrid, iconRadius, iconBlue.R, iconBlue.G, iconBlue.B,
		iconCheck[0][0], iconCheck[0][1], iconCheck[1][0], iconCheck[1][1], iconCheck[2][0], iconCheck[2][1], iconStroke)
}

// iconPNG rasterises the icon at size×size pixels, antialiased by the
// distance of each pixel centre to the shapes' edges. Every build draws the
// icons, so the pixels are written straight into the image, the check
// mark's distance is measured only near it, and the PNG is compressed for
// speed (a few kilobytes more for the 512 px icon).
func iconPNG(size int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	scale := float64(size) / iconGrid // pixels per grid unit
	// Beyond this many grid units from the check mark's corners' box, a
	// pixel does not touch the stroke.
	reach := iconStroke/2 + 1/scale
	minX, maxX, minY, maxY := iconCheck[0][0], iconCheck[0][0], iconCheck[0][1], iconCheck[0][1]
	for _, p := range iconCheck[1:] {
		minX, maxX, minY, maxY = min(minX, p[0]), max(maxX, p[0]), min(minY, p[1]), max(maxY, p[1])
	}
	mix := func(a uint8, check float64) uint8 { return uint8(math.Round(float64(a) + (255-float64(a))*check)) }
	for y := range size {
		py := (float64(y) + 0.5) / scale
		row := img.Pix[y*img.Stride : y*img.Stride+4*size]
		for x := range size {
			px := (float64(x) + 0.5) / scale
			square := coverage(roundedSquareDistance(px, py) * scale)
			check := 0.0
			if px > minX-reach && px < maxX+reach && py > minY-reach && py < maxY+reach {
				check = coverage((polylineDistance(px, py, iconCheck) - iconStroke/2) * scale)
			}
			pix := row[4*x : 4*x+4 : 4*x+4]
			pix[0], pix[1], pix[2], pix[3] = mix(iconBlue.R, check), mix(iconBlue.G, check), mix(iconBlue.B, check), uint8(math.Round(255*square))
		}
	}
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, img); err != nil {
		panic(err) // writing to memory does not fail
	}
	return b.Bytes()
}

// coverage turns a signed distance in pixels (negative inside) into the
// share of the pixel covered.
func coverage(d float64) float64 { return min(1, max(0, 0.5-d)) }

// roundedSquareDistance is the signed distance to the icon's rounded square.
func roundedSquareDistance(x, y float64) float64 {
	half := iconGrid / 2
	qx, qy := math.Abs(x-half)-half+iconRadius, math.Abs(y-half)-half+iconRadius
	ox, oy := max(qx, 0), max(qy, 0)
	return math.Sqrt(ox*ox+oy*oy) + min(max(qx, qy), 0) - iconRadius
}

// polylineDistance is the distance from a point to a polyline.
func polylineDistance(x, y float64, pts [][2]float64) float64 {
	d := math.Inf(1)
	for i := 1; i < len(pts); i++ {
		ax, ay, bx, by := pts[i-1][0], pts[i-1][1], pts[i][0], pts[i][1]
		t := ((x-ax)*(bx-ax) + (y-ay)*(by-ay)) / ((bx-ax)*(bx-ax) + (by-ay)*(by-ay))
		t = min(1, max(0, t))
		dx, dy := x-(ax+t*(bx-ax)), y-(ay+t*(by-ay))
		d = min(d, math.Sqrt(dx*dx+dy*dy))
	}
	return d
}

// icoFile wraps a PNG in the ICO container, which browsers read for
// /favicon.ico.
func icoFile(pngData []byte, size int) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, [3]uint16{0, 1, 1}) // reserved, type icon, one image
	b.Write([]byte{byte(size), byte(size), 0, 0})             // width, height, no palette, reserved
	binary.Write(&b, binary.LittleEndian, [2]uint16{1, 32})   // planes, bits per pixel
	binary.Write(&b, binary.LittleEndian, [2]uint32{uint32(len(pngData)), 22})
	b.Write(pngData)
	return b.Bytes()
}

// iconPaths are the output paths of the icon files, sorted: planning
// needs them, not the files, which are drawn when the job runs.
var iconPaths = []string{templates.AppleTouchIcon[1:], templates.IconPNG[1:], "favicon.ico", templates.IconSVG[1:], iconImagePath}

// icons are the icon files by output path, made once per process: they
// never change.
var icons = sync.OnceValue(func() map[string][]byte {
	small := iconPNG(32)
	return map[string][]byte{
		templates.IconSVG[1:]:        iconSVG(),
		templates.IconPNG[1:]:        small,
		templates.AppleTouchIcon[1:]: iconPNG(180),
		iconImagePath:                iconPNG(512),
		"favicon.ico":                icoFile(small, 32),
	}
})

// iconsJob publishes the icons, except those the content's static files
// provide themselves.
func (b *build) iconsJob() job {
	var paths []string
	for _, p := range iconPaths {
		if !slices.ContainsFunc(b.s.Static, func(f *content.StaticFile) bool { return f.Path == p }) {
			paths = append(paths, p)
		}
	}
	fp := newDigest().str("icons").str(paths...).sum()
	return job{key: "icons", paths: paths, fp: fp, run: func() ([][]byte, error) {
		out := make([][]byte, len(paths))
		for i, p := range paths {
			out[i] = icons()[p]
		}
		return out, nil
	}}
}
