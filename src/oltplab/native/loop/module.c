/* The module oltplab._native: its types and constants, and each compiled workload's. */
#include "mariadb.h"
#include "market.h" /* the brokerage's market emulator */

/* ------------------------------------------------------------------------------------------ */
/* The module                                                                                 */

/* WORKLOADS: the names of the compiled workloads. */
static PyObject *workload_names(void) {
    int n = 0;
    while (WORKLOADS[n]) n++;
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *v = PyUnicode_FromString(WORKLOADS[i]->name);
        if (!v) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

/* Add value (a new reference, NULL when making it failed) as m.name; steals value. */
int module_add(PyObject *m, const char *attr, PyObject *value) {
    if (!value) return -1;
    if (PyModule_AddObject(m, attr, value) < 0) {
        Py_DECREF(value);
        return -1;
    }
    return 0;
}

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "oltplab._native",
                                    "The virtual users' hot path in C.", -1, NULL};

PyMODINIT_FUNC PyInit__native(void) {
    if (PyType_Ready(&ProcLoopType) < 0 || PyType_Ready(&MariaDBLoopType) < 0 ||
        PyType_Ready(&MyConnType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ProcLoopType);
    Py_INCREF(&MariaDBLoopType);
    Py_INCREF(&MyConnType);
    if (module_add(m, "ProcLoop", (PyObject *)&ProcLoopType) < 0 ||
        module_add(m, "MariaDBLoop", (PyObject *)&MariaDBLoopType) < 0 ||
        module_add(m, "MariaDBConnection", (PyObject *)&MyConnType) < 0 ||
        module_add(m, "WORKLOADS", workload_names()) < 0 || brokerage_market_add(m) < 0 ||
        PyModule_AddIntConstant(m, "BOUNDARY", EV_BOUNDARY) < 0 ||
        PyModule_AddIntConstant(m, "FINISHED", EV_FINISHED) < 0 ||
        PyModule_AddIntConstant(m, "SAMPLES", EV_SAMPLES) < 0 ||
        PyModule_AddIntConstant(m, "FAILED", EV_FAILED) < 0 ||
        PyModule_AddIntConstant(m, "STOPPED", EV_STOPPED) < 0 ||
        PyModule_AddIntConstant(m, "LOST", EV_LOST) < 0 ||
        PyModule_AddIntConstant(m, "WOKEN", EV_WOKEN) < 0)
        goto bad;
    for (int i = 0; WORKLOADS[i]; i++)
        if (WORKLOADS[i]->add_to_module(m) < 0) goto bad;
    return m;
bad:
    Py_DECREF(m);
    return NULL;
}
