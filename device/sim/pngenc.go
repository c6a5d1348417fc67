package sim

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"sync"
)

// encodePNG writes an opaque RGBA image as an 8-bit RGB PNG. It is a
// faster stand-in for image/png at BestSpeed: every row uses the Up filter
// (rows of a phone UI mostly repeat the row above) instead of trying all
// five filters per row, which is where image/png spends most of its time.
// The output is a standard PNG that any decoder reads.
func encodePNG(img *image.RGBA) []byte {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	var out bytes.Buffer
	out.Grow(w * h / 4)
	out.WriteString("\x89PNG\r\n\x1a\n")
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2 // bit depth 8, colour type RGB
	writeChunk(&out, "IHDR", ihdr[:])

	var idat bytes.Buffer
	zw := zlibPool.Get().(*zlib.Writer)
	zw.Reset(&idat)
	row := make([]byte, 1+3*w)
	prev := make([]byte, 3*w)
	cur := make([]byte, 3*w)
	for y := 0; y < h; y++ {
		src := img.Pix[(y+b.Min.Y-img.Rect.Min.Y)*img.Stride+(b.Min.X-img.Rect.Min.X)*4:]
		for x := 0; x < w; x++ {
			cur[3*x], cur[3*x+1], cur[3*x+2] = src[4*x], src[4*x+1], src[4*x+2]
		}
		if y == 0 {
			row[0] = 0 // None
			copy(row[1:], cur)
		} else {
			row[0] = 2 // Up
			for i := range cur {
				row[1+i] = cur[i] - prev[i]
			}
		}
		zw.Write(row)
		prev, cur = cur, prev
	}
	zw.Close()
	zlibPool.Put(zw)
	writeChunk(&out, "IDAT", idat.Bytes())
	writeChunk(&out, "IEND", nil)
	return out.Bytes()
}

var zlibPool = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return zw
}}

func writeChunk(out *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	out.Write(n[:])
	out.WriteString(typ)
	out.Write(data)
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	out.Write(n[:])
}
