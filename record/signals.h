/* The table of signals (record/signals.c), NULL-terminated. */
#ifndef NUSKU_RECORD_SIGNALS_H
#define NUSKU_RECORD_SIGNALS_H

#include "record/session.h"

extern const struct nsk_signal *const nsk_signals[];

#endif
