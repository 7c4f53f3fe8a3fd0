/* report.h - report.html, one self-contained page per results folder. */
#ifndef MPSIM_IO_REPORT_H
#define MPSIM_IO_REPORT_H

#include "core/err.h"

int report_dir(const char *dir, struct mp_err *e);

#endif
