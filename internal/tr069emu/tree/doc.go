// Package tree is the parameter tree of an emulated CPE: an immutable
// Template loaded from a tree file and shared by every device, and a Tree,
// one per device, that keeps only that device's differences from it.
//
// The emulator runs tens of thousands of devices in one process, so a Tree
// holds no copy of the template: an untouched tree is a few dozen bytes,
// and each changed value, added instance or deleted object costs about the
// size of its own strings. The tree file format is described in FORMAT.md.
package tree
