/* The CPU backend as the front end sees it: its operations. */
#ifndef CNMS_CPU_H
#define CNMS_CPU_H

#include "cnms_internal.h"

extern const cnms_backend_ops cnms_cpu_ops;

#endif /* CNMS_CPU_H */
