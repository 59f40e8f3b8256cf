/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Windows of the front-end model (bench/model/kpgo-model.c): the plugin
 * counts only between KPGO_MODEL_START(id) and KPGO_MODEL_END(id).  Each is
 * a 7-byte nopl whose displacement carries a magic value and the window's
 * id (0..4095): on hardware and without the plugin they do nothing.
 */
#ifndef KPGO_MODEL_WINDOW_H
#define KPGO_MODEL_WINDOW_H

#define KPGO_MODEL_MARK(value)						\
	do {								\
		asm volatile(".byte 0x0f, 0x1f, 0x80; .long %c0"	\
			     : : "i" (value) : "memory");		\
	} while (0)
#define KPGO_MODEL_START(id) KPGO_MODEL_MARK(0x4b500000 | ((id) & 0xfff))
#define KPGO_MODEL_END(id) KPGO_MODEL_MARK(0x4b508000 | ((id) & 0xfff))

#endif
