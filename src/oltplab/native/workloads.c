/* The workloads compiled into oltplab._native, each in its own folder beside loop/: the one
 * place that names them. */
#include "workload.h"

extern const Workload TPCC_WORKLOAD, DVDS_WORKLOAD, BROKERAGE_WORKLOAD;

const Workload *const WORKLOADS[] = {&TPCC_WORKLOAD, &DVDS_WORKLOAD, &BROKERAGE_WORKLOAD, NULL};

const Workload *workload_named(const char *name) {
    for (int i = 0; WORKLOADS[i]; i++) {
        const Workload *wl = WORKLOADS[i];
        if (strcmp(wl->name, name) != 0) continue;
        if (wl->nkinds < 1 || workload_rows(wl) > MAX_KINDS) { /* never: each asserts it */
            PyErr_Format(PyExc_ValueError, "the workload %s has more rows than MAX_KINDS", name);
            return NULL;
        }
        return wl;
    }
    PyErr_Format(PyExc_ValueError, "no workload %s in the C loop", name);
    return NULL;
}
