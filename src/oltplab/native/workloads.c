/* The workloads compiled into oltplab._native, each in its own folder beside loop/: the one
 * place that names them. */
#include "workload.h"

extern const Workload TPCC_WORKLOAD;

const Workload *const WORKLOADS[] = {&TPCC_WORKLOAD, NULL};

const Workload *workload_named(const char *name) {
    for (int i = 0; WORKLOADS[i]; i++)
        if (strcmp(WORKLOADS[i]->name, name) == 0) return WORKLOADS[i];
    PyErr_Format(PyExc_ValueError, "no workload %s in the C loop", name);
    return NULL;
}
