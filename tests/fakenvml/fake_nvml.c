/*
 * A fake libnvidia-ml.so.1 for gputop's tests.
 *
 * The real nvidia-ml-py (pynvml) loads this library instead of the driver's,
 * so the NVML source is exercised through the real ctypes structs, symbol
 * names and error codes. Its state comes from a scenario file whose path is
 * in the environment variable FAKE_NVML_SCENARIO; the file is re-read when
 * its path, inode, size or mtime changes (checked with one stat() per call).
 * Write scenarios with tests/fakenvml/scenario.py rather than by hand.
 *
 * Scenario format: one record per line; '#' starts a comment line. A record
 * is a keyword followed by key=value pairs; a value with spaces is written
 * in double quotes (no escapes, no quotes inside).
 *
 *   driver 550.54.15                  nvmlSystemGetDriverVersion
 *   cuda 12040                        nvmlSystemGetCudaDriverVersion(_v2)
 *   init_error 9                      nvmlInit* returns this code
 *   gpu name="NVIDIA H100 80GB HBM3" uuid=GPU-... pci=00000000:01:00.0
 *       memory_total=B memory_used=B memory_free=B memory_reserved=B
 *       util_gpu=% util_memory=% encoder=% decoder=% temperature=C
 *       temperature_slowdown=C temperature_shutdown=C fan=% power_mw=mW
 *       power_limit_mw=mW clock_sm=MHz clock_mem=MHz pstate=N
 *       pcie_rx_kbs=KB/s pcie_tx_kbs=KB/s mig_mode=0|1 max_mig=N
 *       persistence_mode=0|1
 *                                     one line per GPU, in index order
 *   mig gpu=I slot=S name="..." uuid=MIG-... memory_total=B memory_used=B
 *       memory_free=B gpu_instance_id=N compute_instance_id=N
 *   process gpu=I [mig=S] pid=P used=B|na kind=C|G|M|CG|...
 *       [sm=%] [mem=%] [enc=%] [dec=%] [sm_time=us]
 *                                     kind letters: C compute, G graphics,
 *                                     M MPS compute; used=na reports
 *                                     NVML_VALUE_NOT_AVAILABLE
 *   gpu ... clock_sm_max=MHz clock_mem_max=MHz clocks_event_reasons=BITS
 *       ecc_volatile=N ecc_aggregate=N (uncorrected) remap_corrected=N
 *       remap_uncorrected=N remap_pending=0|1 remap_failure=0|1
 *       retired_pending=0|1           health: see "diagnosis" below
 *   size_probe success                a process list asked for its size (no
 *                                     buffer) answers SUCCESS with the count
 *                                     set, as some NVML builds do, instead
 *                                     of INSUFFICIENT_SIZE
 *   xid gpu=I code=N                  one critical XID event, delivered once
 *                                     to each event set registered for it
 *   field_error ids=N,N,...|* code=N [gpu=I] [scope=S]
 *                                     nvmlDeviceGetFieldValues answers these
 *                                     field ids (or every one; only in scope
 *                                     S if given) with code N in their own
 *                                     entries, for GPU I or all,
 *                                     while the call itself succeeds and the
 *                                     classic calls still answer: a driver
 *                                     that knows the call but not the field
 *   error fn=NAME|* code=N [gpu=I] [mig=S]
 *                                     NAME (an exported symbol, or its name
 *                                     without _v2/_v3 to match every
 *                                     version; several joined by commas)
 *                                     returns code N, for GPU I (and its
 *                                     MIG devices) or MIG slot S of it, or
 *                                     for every call without gpu=
 *   delay fn=NAME|* [ms=N] [gpu=I] [start=T] [until=T]
 *                                     a matching call (NAME as for error;
 *                                     without gpu=, every call, system calls
 *                                     and nvmlInit included) that begins at
 *                                     or after T=start and before T=until
 *                                     (seconds since the epoch, fractions
 *                                     allowed; either may be left out)
 *                                     first sleeps N ms, or without ms=
 *                                     until T=until: a slow or hung driver.
 *                                     The first matching delay line counts;
 *                                     a scenario rewritten without it ends
 *                                     the calls asleep in it.
 *
 * A device field left out of its line makes its getter return
 * NVML_ERROR_NOT_SUPPORTED. Memory: the v2 call returns the fields as
 * written; the v1 call, like the driver, counts reserved memory as used.
 * A GPU's process lists include the processes of its MIG devices (with
 * their instance ids), as real drivers do; a MIG handle lists only its own.
 * Process utilization samples carry sm_time (default: now, in us) and are
 * returned only when newer than the caller's lastSeenTimeStamp.
 *
 * To simulate an older driver, link with a version script that makes some
 * symbols local (the fixture in tests/fakenvml does this on demand).
 * fake_nvml_call_count(name) and fake_nvml_reset_counts() let tests count
 * the calls made through each symbol; fake_nvml_sleeping() says how many
 * calls are asleep in a delay right now.
 *
 * Calls may come from many threads at once (gputop reads each GPU on its
 * own thread): one lock guards the state, held from the start of a call to
 * its return except while the call sleeps in a delay, so a delayed call
 * blocks only the thread that made it, as a hung driver call does.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef int nvmlReturn_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
};

#define MAX_GPUS 64
#define MAX_MIGS 8
#define MAX_RULES 256
#define UNSET (-1LL)
#define NOT_AVAILABLE (~0ULL)

#define FAKE_FUNCTIONS(X)                                                          \
    X(nvmlInit) X(nvmlInit_v2) X(nvmlInitWithFlags) X(nvmlShutdown)                \
    X(nvmlErrorString) X(nvmlSystemGetDriverVersion)                               \
    X(nvmlSystemGetCudaDriverVersion) X(nvmlSystemGetCudaDriverVersion_v2)         \
    X(nvmlDeviceGetCount) X(nvmlDeviceGetCount_v2)                                 \
    X(nvmlDeviceGetHandleByIndex) X(nvmlDeviceGetHandleByIndex_v2)                 \
    X(nvmlDeviceGetName) X(nvmlDeviceGetUUID) X(nvmlDeviceGetPciInfo_v3)           \
    X(nvmlDeviceGetMemoryInfo) X(nvmlDeviceGetMemoryInfo_v2)                       \
    X(nvmlDeviceGetUtilizationRates) X(nvmlDeviceGetEncoderUtilization)            \
    X(nvmlDeviceGetDecoderUtilization) X(nvmlDeviceGetTemperature)                 \
    X(nvmlDeviceGetTemperatureV) X(nvmlDeviceGetTemperatureThreshold)              \
    X(nvmlDeviceGetFanSpeed) X(nvmlDeviceGetPowerUsage)                            \
    X(nvmlDeviceGetEnforcedPowerLimit) X(nvmlDeviceGetClockInfo)                   \
    X(nvmlDeviceGetPerformanceState) X(nvmlDeviceGetPcieThroughput)                \
    X(nvmlDeviceGetMigMode) X(nvmlDeviceGetMaxMigDeviceCount)                      \
    X(nvmlDeviceGetMigDeviceHandleByIndex) X(nvmlDeviceIsMigDeviceHandle)          \
    X(nvmlDeviceGetGpuInstanceId) X(nvmlDeviceGetComputeInstanceId)                \
    X(nvmlDeviceGetComputeRunningProcesses)                                        \
    X(nvmlDeviceGetComputeRunningProcesses_v2)                                     \
    X(nvmlDeviceGetComputeRunningProcesses_v3)                                     \
    X(nvmlDeviceGetGraphicsRunningProcesses)                                       \
    X(nvmlDeviceGetGraphicsRunningProcesses_v2)                                    \
    X(nvmlDeviceGetGraphicsRunningProcesses_v3)                                    \
    X(nvmlDeviceGetMPSComputeRunningProcesses)                                     \
    X(nvmlDeviceGetMPSComputeRunningProcesses_v2)                                  \
    X(nvmlDeviceGetMPSComputeRunningProcesses_v3)                                  \
    X(nvmlDeviceGetProcessUtilization)                                             \
    X(nvmlDeviceGetIndex) X(nvmlDeviceGetComputeMode)                              \
    X(nvmlDeviceGetPersistenceMode) X(nvmlDeviceGetDisplayActive)                  \
    X(nvmlDeviceGetDisplayMode) X(nvmlDeviceGetPowerManagementLimit)               \
    X(nvmlDeviceGetTotalEccErrors) X(nvmlDeviceGetBAR1MemoryInfo)                  \
    X(nvmlDeviceGetMaxClockInfo) X(nvmlDeviceGetHandleByUUID)                      \
    X(nvmlDeviceGetHandleByPciBusId_v2) X(nvmlDeviceGetCudaComputeCapability)      \
    X(nvmlDeviceGetSerial) X(nvmlDeviceGetFieldValues)                             \
    X(nvmlDeviceGetDriverModel) X(nvmlDeviceGetDriverModel_v2)                   \
    DIAGNOSIS_FUNCTIONS(X) ACTIVITY_FUNCTIONS(X)

/* The activity section's entry points: GPM, energy, the PCIe link (see the end of this file). */
#define ACTIVITY_FUNCTIONS(X)                                                      \
    X(nvmlGpmQueryDeviceSupport) X(nvmlGpmSampleAlloc) X(nvmlGpmSampleFree)        \
    X(nvmlGpmSampleGet) X(nvmlGpmMigSampleGet) X(nvmlGpmMetricsGet)                \
    X(nvmlDeviceGetTotalEnergyConsumption)                                         \
    X(nvmlDeviceGetCurrPcieLinkGeneration) X(nvmlDeviceGetMaxPcieLinkGeneration)   \
    X(nvmlDeviceGetCurrPcieLinkWidth) X(nvmlDeviceGetMaxPcieLinkWidth)         \
    X(nvmlDeviceGetPcieReplayCounter) X(nvmlDeviceGetNvLinkState)                  \
    X(nvmlDeviceGetNvLinkVersion) X(nvmlDeviceGetNvLinkErrorCounter)

/* The diagnosis section's entry points (see the end of this file). */
#define DIAGNOSIS_FUNCTIONS(X)                                                     \
    X(nvmlDeviceGetCurrentClocksEventReasons)                                      \
    X(nvmlDeviceGetCurrentClocksThrottleReasons)                                   \
    X(nvmlDeviceGetRemappedRows) X(nvmlDeviceGetRetiredPagesPendingStatus)         \
    X(nvmlEventSetCreate) X(nvmlDeviceRegisterEvents) X(nvmlEventSetWait_v2)       \
    X(nvmlEventSetWait) X(nvmlEventSetFree)

#define AS_ENUM(name) FN_##name,
enum { FAKE_FUNCTIONS(AS_ENUM) FN_COUNT };
#define AS_NAME(name) #name,
static const char *const fn_names[FN_COUNT] = {FAKE_FUNCTIONS(AS_NAME)};
static unsigned long long call_counts[FN_COUNT];

typedef struct device {
    int present;
    int is_mig;
    int gpu;  /* physical GPU index */
    int slot; /* MIG slot, -1 for a physical GPU */
    char name[96];
    char uuid[96];
    char pci[32];
    long long memory_total, memory_used, memory_free, memory_reserved;
    long long util_gpu, util_memory, encoder, decoder;
    long long temperature, temperature_slowdown, temperature_shutdown, fan;
    long long power_mw, power_limit_mw, clock_sm, clock_mem, pstate;
    long long pcie_rx_kbs, pcie_tx_kbs, mig_mode, max_mig;
    long long gpu_instance_id, compute_instance_id;
    /* diagnosis */
    long long clock_sm_max, clock_mem_max, clocks_event_reasons;
    long long ecc_volatile, ecc_aggregate;
    long long remap_corrected, remap_uncorrected, remap_pending, remap_failure;
    long long retired_pending;
    long long persistence_mode; /* 1 enabled, 0 disabled */
} device_t;

typedef struct process {
    int gpu, slot;
    unsigned pid;
    unsigned long long used;
    int kinds; /* KIND_* bits */
    long long sm, mem, enc, dec, sm_time;
} process_t;

enum { KIND_C = 1, KIND_G = 2, KIND_M = 4 };

typedef struct rule {
    unsigned char fns[FN_COUNT];
    int gpu, slot, code;
} rule_t;

typedef struct delay {
    unsigned char fns[FN_COUNT];
    int gpu;
    long long ms;        /* UNSET: sleep until `until` */
    double start, until; /* seconds since the epoch; 0: no bound */
} delay_t;

/* Handles are pointers into these arrays, so they stay valid across reloads. */
static device_t gpus[MAX_GPUS];
static device_t migs[MAX_GPUS][MAX_MIGS];
static int gpu_count;
static process_t *processes;
static int process_count, process_capacity;
static rule_t rules[MAX_RULES];
static int rule_count;
static delay_t delays[MAX_RULES];
static int delay_count;
static char driver_version[80];
static long long cuda_version;
static int init_error;
static int init_refcount;
static int size_probe_success; /* "size_probe success": see process_list() */

static char loaded_path[4096];
static struct stat loaded_stat;
static int loaded;

/* Every numeric field, memory_total .. retired_pending, is a long long in a row. */
static void reset_device(device_t *d) {
    memset(d, 0, sizeof(*d));
    long long *first = &d->memory_total;
    long long *last = &d->retired_pending;
    for (long long *f = first; f <= last; f++) *f = UNSET;
}

/* XID records, in scenario order; the n-th is delivered once, however often the file is re-read. */
#define MAX_XIDS 256
static struct { int gpu; unsigned long long code; } xids[MAX_XIDS];
static int xid_count;

static void reset_activity(void);
static int set_activity_field(const device_t *d, const char *key, const char *value);

static void reset_scenario(void) {
    reset_activity();
    xid_count = 0;
    for (int i = 0; i < MAX_GPUS; i++) {
        reset_device(&gpus[i]);
        for (int s = 0; s < MAX_MIGS; s++) reset_device(&migs[i][s]);
    }
    gpu_count = 0;
    process_count = 0;
    rule_count = 0;
    delay_count = 0;
    strcpy(driver_version, "0.0");
    cuda_version = UNSET;
    init_error = 0;
    size_probe_success = 0;
}

/* Split "key=value" pairs; values may be "quoted". Returns 0 at the end. */
static int next_pair(char **cursor, char **key, char **value) {
    char *p = *cursor;
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p) return 0;
    *key = p;
    while (*p && *p != '=' && !isspace((unsigned char)*p)) p++;
    if (*p != '=') {
        *value = p;
        if (*p) *p++ = '\0';
        *cursor = p;
        return 1;
    }
    *p++ = '\0';
    if (*p == '"') {
        *value = ++p;
        while (*p && *p != '"') p++;
    } else {
        *value = p;
        while (*p && !isspace((unsigned char)*p)) p++;
    }
    if (*p) *p++ = '\0';
    *cursor = p;
    return 1;
}

static long long number(const char *text) {
    if (strcmp(text, "na") == 0) return (long long)NOT_AVAILABLE;
    return strtoll(text, NULL, 0);
}

static void copy_text(char *dest, size_t size, const char *text) {
    snprintf(dest, size, "%s", text);
}

static void set_device_field(device_t *d, const char *key, const char *value) {
    if (strcmp(key, "name") == 0) { copy_text(d->name, sizeof d->name, value); return; }
    if (strcmp(key, "uuid") == 0) { copy_text(d->uuid, sizeof d->uuid, value); return; }
    if (strcmp(key, "pci") == 0) { copy_text(d->pci, sizeof d->pci, value); return; }
    static const struct { const char *key; size_t offset; } fields[] = {
#define FIELD(name) {#name, offsetof(device_t, name)}
        FIELD(memory_total), FIELD(memory_used), FIELD(memory_free),
        FIELD(memory_reserved), FIELD(util_gpu), FIELD(util_memory),
        FIELD(encoder), FIELD(decoder), FIELD(temperature),
        FIELD(temperature_slowdown), FIELD(temperature_shutdown), FIELD(fan),
        FIELD(power_mw), FIELD(power_limit_mw), FIELD(clock_sm), FIELD(clock_mem),
        FIELD(pstate), FIELD(pcie_rx_kbs), FIELD(pcie_tx_kbs), FIELD(mig_mode),
        FIELD(max_mig), FIELD(gpu_instance_id), FIELD(compute_instance_id),
        FIELD(clock_sm_max), FIELD(clock_mem_max), FIELD(clocks_event_reasons),
        FIELD(ecc_volatile), FIELD(ecc_aggregate), FIELD(remap_corrected),
        FIELD(remap_uncorrected), FIELD(remap_pending), FIELD(remap_failure),
        FIELD(retired_pending),
        FIELD(persistence_mode),
#undef FIELD
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (strcmp(key, fields[i].key) == 0) {
            *(long long *)((char *)d + fields[i].offset) = number(value);
            return;
        }
    }
    if (set_activity_field(d, key, value)) return;
    fprintf(stderr, "fake_nvml: unknown device key '%s'\n", key);
}

static int rule_matches_symbol(const char *rule, size_t n, const char *symbol) {
    if ((n == 1 && rule[0] == '*') || (strlen(symbol) == n && strncmp(rule, symbol, n) == 0))
        return 1;
    return strncmp(rule, symbol, n) == 0 &&
           (strcmp(symbol + n, "_v2") == 0 || strcmp(symbol + n, "_v3") == 0);
}

static int parse_xid(char *cursor);
static void parse_field_error(char *cursor);

/* Mark in `fns` every function a comma-separated list of rule names matches. */
static void match_functions(unsigned char *fns, const char *names) {
    for (const char *name = names; *name;) {
        size_t n = strcspn(name, ",");
        for (int f = 0; f < FN_COUNT; f++)
            if (rule_matches_symbol(name, n, fn_names[f])) fns[f] = 1;
        name += n;
        if (*name == ',') name++;
    }
}

static void parse_record(char *line) {
    char *cursor = line, *key, *value;
    char *kind;
    if (!next_pair(&cursor, &kind, &value)) return;
    if (kind[0] == '#') return;
    if (strcmp(kind, "driver") == 0 || strcmp(kind, "cuda") == 0 ||
        strcmp(kind, "init_error") == 0) {
        char *arg;
        if (!next_pair(&cursor, &arg, &value)) return;
        if (kind[0] == 'd') copy_text(driver_version, sizeof driver_version, arg);
        else if (kind[0] == 'c') cuda_version = number(arg);
        else init_error = (int)number(arg);
        return;
    }
    if (strcmp(kind, "size_probe") == 0) {
        char *arg;
        size_probe_success = next_pair(&cursor, &arg, &value) && strcmp(arg, "success") == 0;
        return;
    }
    if (strcmp(kind, "gpu") == 0) {
        if (gpu_count >= MAX_GPUS) return;
        device_t *d = &gpus[gpu_count];
        d->present = 1;
        d->gpu = gpu_count++;
        d->slot = -1;
        while (next_pair(&cursor, &key, &value)) set_device_field(d, key, value);
        return;
    }
    if (strcmp(kind, "mig") == 0) {
        int gpu = -1, slot = -1;
        char *rest = cursor;
        /* First pass for the address, second for the fields. */
        char copy[4096];
        copy_text(copy, sizeof copy, rest);
        char *c2 = copy;
        while (next_pair(&c2, &key, &value)) {
            if (strcmp(key, "gpu") == 0) gpu = (int)number(value);
            if (strcmp(key, "slot") == 0) slot = (int)number(value);
        }
        if (gpu < 0 || gpu >= MAX_GPUS || slot < 0 || slot >= MAX_MIGS) return;
        device_t *d = &migs[gpu][slot];
        reset_device(d);
        d->present = 1;
        d->is_mig = 1;
        d->gpu = gpu;
        d->slot = slot;
        while (next_pair(&cursor, &key, &value)) {
            if (strcmp(key, "gpu") != 0 && strcmp(key, "slot") != 0)
                set_device_field(d, key, value);
        }
        return;
    }
    if (strcmp(kind, "process") == 0) {
        if (process_count == process_capacity) {
            process_capacity = process_capacity ? process_capacity * 2 : 256;
            processes = realloc(processes, sizeof(process_t) * (size_t)process_capacity);
        }
        process_t *p = &processes[process_count++];
        memset(p, 0, sizeof *p);
        p->slot = -1;
        p->sm = p->mem = p->enc = p->dec = p->sm_time = UNSET;
        p->kinds = KIND_C;
        while (next_pair(&cursor, &key, &value)) {
            if (strcmp(key, "gpu") == 0) p->gpu = (int)number(value);
            else if (strcmp(key, "mig") == 0) p->slot = (int)number(value);
            else if (strcmp(key, "pid") == 0) p->pid = (unsigned)number(value);
            else if (strcmp(key, "used") == 0) p->used = (unsigned long long)number(value);
            else if (strcmp(key, "sm") == 0) p->sm = number(value);
            else if (strcmp(key, "mem") == 0) p->mem = number(value);
            else if (strcmp(key, "enc") == 0) p->enc = number(value);
            else if (strcmp(key, "dec") == 0) p->dec = number(value);
            else if (strcmp(key, "sm_time") == 0) p->sm_time = number(value);
            else if (strcmp(key, "kind") == 0) {
                p->kinds = 0;
                for (const char *k = value; *k; k++)
                    p->kinds |= *k == 'C' ? KIND_C : *k == 'G' ? KIND_G : *k == 'M' ? KIND_M : 0;
            }
        }
        return;
    }
    if (strcmp(kind, "xid") == 0) {
        parse_xid(cursor);
        return;
    }
    if (strcmp(kind, "field_error") == 0) {
        parse_field_error(cursor);
        return;
    }
    if (strcmp(kind, "error") == 0) {
        if (rule_count >= MAX_RULES) return;
        rule_t *r = &rules[rule_count++];
        memset(r, 0, sizeof *r);
        r->gpu = r->slot = -1;
        while (next_pair(&cursor, &key, &value)) {
            if (strcmp(key, "gpu") == 0) r->gpu = (int)number(value);
            else if (strcmp(key, "mig") == 0) r->slot = (int)number(value);
            else if (strcmp(key, "code") == 0) r->code = (int)number(value);
            else if (strcmp(key, "fn") == 0) match_functions(r->fns, value);
        }
        return;
    }
    if (strcmp(kind, "delay") == 0) {
        if (delay_count >= MAX_RULES) return;
        delay_t *r = &delays[delay_count++];
        memset(r, 0, sizeof *r);
        r->gpu = -1;
        r->ms = UNSET;
        while (next_pair(&cursor, &key, &value)) {
            if (strcmp(key, "gpu") == 0) r->gpu = (int)number(value);
            else if (strcmp(key, "ms") == 0) r->ms = number(value);
            else if (strcmp(key, "start") == 0) r->start = strtod(value, NULL);
            else if (strcmp(key, "until") == 0) r->until = strtod(value, NULL);
            else if (strcmp(key, "fn") == 0) match_functions(r->fns, value);
        }
        return;
    }
    fprintf(stderr, "fake_nvml: unknown record '%s'\n", kind);
}

static void load_scenario(const char *path) {
    reset_scenario();
    FILE *file = fopen(path, "r");
    if (!file) return;
    char line[4096];
    while (fgets(line, sizeof line, file)) parse_record(line);
    fclose(file);
}

/* Broadcast whenever a scenario is loaded: an event wait looks for new XIDs then. */
static pthread_cond_t scenario_loaded = PTHREAD_COND_INITIALIZER;

static void maybe_reload(int force) {
    const char *path = getenv("FAKE_NVML_SCENARIO");
    struct stat st;
    if (!path || stat(path, &st) != 0) {
        if (loaded || force) reset_scenario();
        loaded = 0;
        loaded_path[0] = '\0';
        return;
    }
    if (!force && loaded && strcmp(path, loaded_path) == 0 &&
        st.st_ino == loaded_stat.st_ino && st.st_size == loaded_stat.st_size &&
        st.st_mtim.tv_sec == loaded_stat.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == loaded_stat.st_mtim.tv_nsec)
        return;
    load_scenario(path);
    copy_text(loaded_path, sizeof loaded_path, path);
    loaded_stat = st;
    loaded = 1;
    pthread_cond_broadcast(&scenario_loaded);
}

static int handle_valid(const device_t *d) {
    const device_t *gpu_end = gpus + MAX_GPUS;
    const device_t *mig_begin = &migs[0][0];
    const device_t *mig_end = mig_begin + MAX_GPUS * MAX_MIGS;
    if (!((d >= gpus && d < gpu_end) || (d >= mig_begin && d < mig_end))) return 0;
    return d->present;
}

static nvmlReturn_t rule_error(int fn, int gpu, int slot) {
    for (int i = 0; i < rule_count; i++) {
        const rule_t *r = &rules[i];
        if (!r->fns[fn]) continue;
        if (r->gpu >= 0 && r->gpu != gpu) continue;
        if (r->slot >= 0 && r->slot != slot) continue;
        return r->code;
    }
    return NVML_SUCCESS;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* When a call of `fn` on GPU `gpu` (-1: not about a GPU) that began at
   `begun` should go on, per the first delay line matching it; 0 when at once. */
static double delay_until(int fn, int gpu, double begun) {
    double now = begun;
    for (int i = 0; i < delay_count; i++) {
        const delay_t *r = &delays[i];
        if (!r->fns[fn]) continue;
        if (r->gpu >= 0 && r->gpu != gpu) continue;
        if ((r->start && now < r->start) || (r->until && now >= r->until)) continue;
        if (r->ms != UNSET) return now + (double)r->ms / 1000.0;
        return r->until;
    }
    return 0;
}

static void sleep_until(double wake) {
    struct timespec ts;
    ts.tv_sec = (time_t)wake;
    ts.tv_nsec = (long)((wake - (double)ts.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static int sleeping_calls;

typedef struct call {
    int held;
} call_t;

static void end_call(call_t *call) {
    if (call->held) pthread_mutex_unlock(&state_lock);
}

/* The one hook every entry point passes through first (CALL): count the
   call, re-read a changed scenario, and sleep out a matching delay without
   the lock. The lock is then held until the entry point returns, when
   end_call() releases it. `d` is the device asked about, or NULL and then
   `gpu` is the GPU index the call names (-1: none). */
static void begin_call(call_t *call, int fn, const device_t *d, int gpu, int force_reload) {
    pthread_mutex_lock(&state_lock);
    call->held = 1;
    call_counts[fn]++;
    maybe_reload(force_reload);
    if (d) gpu = handle_valid(d) ? d->gpu : -1;
    double begun = now_s();
    double wake = delay_until(fn, gpu, begun);
    if (wake <= 0) return;
    sleeping_calls++;
    /* Asleep in steps, so that a scenario without the delay any more ends it. */
    while (wake > 0 && now_s() < wake) {
        pthread_mutex_unlock(&state_lock);
        double step = now_s() + 0.02;
        sleep_until(step < wake ? step : wake);
        pthread_mutex_lock(&state_lock);
        maybe_reload(0);
        wake = delay_until(fn, gpu, begun);
    }
    sleeping_calls--;
}

#define CALL(fn_id, dev, gpu, force)                                  \
    call_t call_ __attribute__((cleanup(end_call))) = {0};            \
    begin_call(&call_, (fn_id), (dev), (gpu), (force))

/* After CALL: check init, the handle and injected errors. */
static nvmlReturn_t enter(int fn, const device_t *d) {
    if (init_refcount == 0) return NVML_ERROR_UNINITIALIZED;
    if (d) {
        if (!handle_valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
        return rule_error(fn, d->gpu, d->slot);
    }
    return rule_error(fn, -1, -1);
}

#define ENTER(fn, dev)                                        \
    CALL(FN_##fn, (dev), -1, 0);                              \
    do {                                                      \
        nvmlReturn_t entered_ = enter(FN_##fn, (dev));        \
        if (entered_ != NVML_SUCCESS) return entered_;        \
    } while (0)

#define REQUIRE(value)                                                \
    do {                                                              \
        if ((value) == UNSET) return NVML_ERROR_NOT_SUPPORTED;        \
    } while (0)

static nvmlReturn_t copy_string(char *dest, unsigned length, const char *text) {
    if (!dest) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(text) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(dest, text);
    return NVML_SUCCESS;
}

/* ---- init, system ------------------------------------------------------ */

static nvmlReturn_t do_init(int fn) {
    CALL(fn, NULL, -1, 1);
    if (init_error) return init_error;
    init_refcount++;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit(void) { return do_init(FN_nvmlInit); }
nvmlReturn_t nvmlInit_v2(void) { return do_init(FN_nvmlInit_v2); }
nvmlReturn_t nvmlInitWithFlags(unsigned flags) {
    (void)flags;
    return do_init(FN_nvmlInitWithFlags);
}

nvmlReturn_t nvmlShutdown(void) {
    ENTER(nvmlShutdown, NULL);
    init_refcount--;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result) {
    CALL(FN_nvmlErrorString, NULL, -1, 0);
    switch (result) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 6: return "Not Found";
    case 7: return "Insufficient Size";
    case 9: return "Driver Not Loaded";
    case 10: return "Timeout";
    case 13: return "Function Not Found";
    case 15: return "GPU is lost";
    case 18: return "RM has detected an NVML/RM version mismatch.";
    case 21: return "No data";
    case 999: return "Unknown Error";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned length) {
    ENTER(nvmlSystemGetDriverVersion, NULL);
    return copy_string(version, length, driver_version);
}

static nvmlReturn_t cuda_driver_version(int *version) {
    REQUIRE(cuda_version);
    *version = (int)cuda_version;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *version) {
    ENTER(nvmlSystemGetCudaDriverVersion, NULL);
    return cuda_driver_version(version);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version) {
    ENTER(nvmlSystemGetCudaDriverVersion_v2, NULL);
    return cuda_driver_version(version);
}

/* ---- devices ----------------------------------------------------------- */

typedef device_t *nvmlDevice_t;

nvmlReturn_t nvmlDeviceGetCount(unsigned *count) {
    ENTER(nvmlDeviceGetCount, NULL);
    *count = (unsigned)gpu_count;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count) {
    ENTER(nvmlDeviceGetCount_v2, NULL);
    *count = (unsigned)gpu_count;
    return NVML_SUCCESS;
}

static nvmlReturn_t handle_by_index(int fn, unsigned index, nvmlDevice_t *device) {
    CALL(fn, NULL, (int)index, 0);
    if (init_refcount == 0) return NVML_ERROR_UNINITIALIZED;
    if (index >= (unsigned)gpu_count) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t error = rule_error(fn, (int)index, -1);
    if (error) return error;
    *device = &gpus[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned index, nvmlDevice_t *device) {
    return handle_by_index(FN_nvmlDeviceGetHandleByIndex, index, device);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *device) {
    return handle_by_index(FN_nvmlDeviceGetHandleByIndex_v2, index, device);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned length) {
    ENTER(nvmlDeviceGetName, d);
    if (!d->name[0]) return NVML_ERROR_NOT_SUPPORTED;
    return copy_string(name, length, d->name);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned length) {
    ENTER(nvmlDeviceGetUUID, d);
    if (!d->uuid[0]) return NVML_ERROR_NOT_SUPPORTED;
    return copy_string(uuid, length, d->uuid);
}

typedef struct {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci) {
    ENTER(nvmlDeviceGetPciInfo_v3, d);
    if (!d->pci[0]) return NVML_ERROR_NOT_SUPPORTED;
    memset(pci, 0, sizeof *pci);
    copy_text(pci->busId, sizeof pci->busId, d->pci);
    memcpy(pci->busIdLegacy, d->pci, sizeof pci->busIdLegacy - 1); /* legacy: truncated */
    sscanf(d->pci, "%x:%x:%x", &pci->domain, &pci->bus, &pci->device);
    pci->pciDeviceId = 0x233010DE;
    return NVML_SUCCESS;
}

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    unsigned version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *memory) {
    ENTER(nvmlDeviceGetMemoryInfo, d);
    REQUIRE(d->memory_total);
    long long reserved = d->memory_reserved == UNSET ? 0 : d->memory_reserved;
    memory->total = (unsigned long long)d->memory_total;
    memory->free = (unsigned long long)d->memory_free;
    memory->used = (unsigned long long)(d->memory_used + reserved);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *memory) {
    ENTER(nvmlDeviceGetMemoryInfo_v2, d);
    if (memory->version >> 24 != 2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    REQUIRE(d->memory_total);
    memory->total = (unsigned long long)d->memory_total;
    memory->reserved = d->memory_reserved == UNSET ? 0 : (unsigned long long)d->memory_reserved;
    memory->free = (unsigned long long)d->memory_free;
    memory->used = (unsigned long long)d->memory_used;
    return NVML_SUCCESS;
}

typedef struct {
    unsigned gpu, memory;
} nvmlUtilization_t;

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *util) {
    ENTER(nvmlDeviceGetUtilizationRates, d);
    REQUIRE(d->util_gpu);
    util->gpu = (unsigned)d->util_gpu;
    util->memory = d->util_memory == UNSET ? 0 : (unsigned)d->util_memory;
    return NVML_SUCCESS;
}

static nvmlReturn_t codec_util(long long value, unsigned *util, unsigned *period_us) {
    REQUIRE(value);
    *util = (unsigned)value;
    *period_us = 167000;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned *util, unsigned *period) {
    ENTER(nvmlDeviceGetEncoderUtilization, d);
    return codec_util(d->encoder, util, period);
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned *util, unsigned *period) {
    ENTER(nvmlDeviceGetDecoderUtilization, d);
    return codec_util(d->decoder, util, period);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *temp) {
    ENTER(nvmlDeviceGetTemperature, d);
    if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
    REQUIRE(d->temperature);
    *temp = (unsigned)d->temperature;
    return NVML_SUCCESS;
}

typedef struct {
    unsigned version;
    int sensorType;
    int temperature;
} nvmlTemperature_t;

nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t d, nvmlTemperature_t *temp) {
    ENTER(nvmlDeviceGetTemperatureV, d);
    if (temp->version >> 24 != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (temp->sensorType != 0) return NVML_ERROR_INVALID_ARGUMENT;
    REQUIRE(d->temperature);
    temp->temperature = (int)d->temperature;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, int kind, unsigned *temp) {
    ENTER(nvmlDeviceGetTemperatureThreshold, d);
    long long value = kind == 0 ? d->temperature_shutdown
                      : kind == 1 ? d->temperature_slowdown : UNSET;
    REQUIRE(value);
    *temp = (unsigned)value;
    return NVML_SUCCESS;
}

#define SIMPLE_UINT_GETTER(fn, field)                         \
    nvmlReturn_t fn(nvmlDevice_t d, unsigned *value) {        \
        ENTER(fn, d);                                         \
        REQUIRE(d->field);                                    \
        *value = (unsigned)d->field;                          \
        return NVML_SUCCESS;                                  \
    }

SIMPLE_UINT_GETTER(nvmlDeviceGetFanSpeed, fan)
SIMPLE_UINT_GETTER(nvmlDeviceGetPowerUsage, power_mw)
SIMPLE_UINT_GETTER(nvmlDeviceGetEnforcedPowerLimit, power_limit_mw)
SIMPLE_UINT_GETTER(nvmlDeviceGetPerformanceState, pstate)
SIMPLE_UINT_GETTER(nvmlDeviceGetMaxMigDeviceCount, max_mig)
SIMPLE_UINT_GETTER(nvmlDeviceGetGpuInstanceId, gpu_instance_id)
SIMPLE_UINT_GETTER(nvmlDeviceGetComputeInstanceId, compute_instance_id)
SIMPLE_UINT_GETTER(nvmlDeviceGetPowerManagementLimit, power_limit_mw)
SIMPLE_UINT_GETTER(nvmlDeviceGetPersistenceMode, persistence_mode)

/* ---- what other monitors ask for (so the benchmark compares like with like) ---- */

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned *index) {
    ENTER(nvmlDeviceGetIndex, d);
    if (d->is_mig) return NVML_ERROR_NOT_SUPPORTED;
    *index = (unsigned)d->gpu;
    return NVML_SUCCESS;
}

#define CONSTANT_INT_GETTER(fn, constant)                     \
    nvmlReturn_t fn(nvmlDevice_t d, int *value) {             \
        ENTER(fn, d);                                         \
        *value = (constant);                                  \
        return NVML_SUCCESS;                                  \
    }

CONSTANT_INT_GETTER(nvmlDeviceGetComputeMode, 0)     /* default */
CONSTANT_INT_GETTER(nvmlDeviceGetDisplayActive, 0)
CONSTANT_INT_GETTER(nvmlDeviceGetDisplayMode, 0)

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long *count) {
    ENTER(nvmlDeviceGetTotalEccErrors, d);
    /* Only uncorrected counts (type 1): volatile (counter 0) and aggregate (1). */
    long long value = type != 1 ? UNSET : counter == 0 ? d->ecc_volatile : counter == 1 ? d->ecc_aggregate : UNSET;
    REQUIRE(value);
    *count = (unsigned long long)value;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t d, unsigned long long *bar1) {
    ENTER(nvmlDeviceGetBAR1MemoryInfo, d);
    bar1[0] = 256ULL << 20; /* total, free, used */
    bar1[1] = 250ULL << 20;
    bar1[2] = 6ULL << 20;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned *clock) {
    ENTER(nvmlDeviceGetMaxClockInfo, d);
    long long value = (type == 0 || type == 1) ? d->clock_sm_max : type == 2 ? d->clock_mem_max : UNSET;
    REQUIRE(value);
    *clock = (unsigned)value;
    return NVML_SUCCESS;
}

static nvmlReturn_t handle_by_text(int fn, const char *text, size_t offset, nvmlDevice_t *device) {
    CALL(fn, NULL, -1, 0);
    nvmlReturn_t entered = enter(fn, NULL);
    if (entered != NVML_SUCCESS) return entered;
    if (!text || !device) return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < gpu_count; i++) {
        if (gpus[i].present && strcmp((const char *)&gpus[i] + offset, text) == 0) {
            *device = &gpus[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device) {
    return handle_by_text(FN_nvmlDeviceGetHandleByUUID, uuid, offsetof(device_t, uuid), device);
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pci, nvmlDevice_t *device) {
    return handle_by_text(FN_nvmlDeviceGetHandleByPciBusId_v2, pci, offsetof(device_t, pci), device);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor) {
    ENTER(nvmlDeviceGetCudaComputeCapability, d);
    *major = 9;
    *minor = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char *serial, unsigned length) {
    (void)serial, (void)length;
    ENTER(nvmlDeviceGetSerial, d);
    return NVML_ERROR_NOT_SUPPORTED;
}

/* Windows driver models: a Linux driver has the symbols and answers NOT_SUPPORTED. */
nvmlReturn_t nvmlDeviceGetDriverModel(nvmlDevice_t d, int *current, int *pending) {
    (void)current, (void)pending;
    ENTER(nvmlDeviceGetDriverModel, d);
    return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetDriverModel_v2(nvmlDevice_t d, int *current, int *pending) {
    (void)current, (void)pending;
    ENTER(nvmlDeviceGetDriverModel_v2, d);
    return NVML_ERROR_NOT_SUPPORTED;
}

static nvmlReturn_t field_values(const device_t *d, int count, void *values);

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, void *values) {
    ENTER(nvmlDeviceGetFieldValues, d);
    return field_values(d, count, values);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *clock) {
    ENTER(nvmlDeviceGetClockInfo, d);
    long long value = (type == 0 || type == 1) ? d->clock_sm : type == 2 ? d->clock_mem : UNSET;
    REQUIRE(value);
    *clock = (unsigned)value;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned *value) {
    ENTER(nvmlDeviceGetPcieThroughput, d);
    long long kbs = counter == 0 ? d->pcie_tx_kbs : counter == 1 ? d->pcie_rx_kbs : UNSET;
    REQUIRE(kbs);
    *value = (unsigned)kbs;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *current, unsigned *pending) {
    ENTER(nvmlDeviceGetMigMode, d);
    if (d->is_mig) return NVML_ERROR_NOT_SUPPORTED;
    REQUIRE(d->mig_mode);
    *current = *pending = (unsigned)d->mig_mode;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t d, unsigned *is_mig) {
    ENTER(nvmlDeviceIsMigDeviceHandle, d);
    *is_mig = (unsigned)d->is_mig;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned index,
                                                 nvmlDevice_t *mig) {
    CALL(FN_nvmlDeviceGetMigDeviceHandleByIndex, d, -1, 0);
    if (init_refcount == 0) return NVML_ERROR_UNINITIALIZED;
    if (!handle_valid(d) || d->is_mig) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t error = rule_error(FN_nvmlDeviceGetMigDeviceHandleByIndex, d->gpu, (int)index);
    if (error) return error;
    if (d->mig_mode != 1) return NVML_ERROR_NOT_SUPPORTED;
    if (index >= MAX_MIGS || (d->max_mig != UNSET && index >= d->max_mig))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!migs[d->gpu][index].present) return NVML_ERROR_NOT_FOUND;
    *mig = &migs[d->gpu][index];
    return NVML_SUCCESS;
}

/* ---- processes --------------------------------------------------------- */

typedef struct {
    unsigned pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct {
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_v2_t;

static int process_on(const process_t *p, const device_t *d) {
    if (p->gpu != d->gpu) return 0;
    return !d->is_mig || p->slot == d->slot;
}

static nvmlReturn_t process_list(const device_t *d, unsigned *count, void *infos,
                                 int kind, int version) {
    unsigned n = 0;
    for (int i = 0; i < process_count; i++)
        if ((processes[i].kinds & kind) && process_on(&processes[i], d)) n++;
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    if (n == 0) {
        *count = 0;
        return NVML_SUCCESS;
    }
    if (!infos && size_probe_success) {
        *count = n; /* the size, answered as a success */
        return NVML_SUCCESS;
    }
    if (!infos || *count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    unsigned k = 0;
    for (int i = 0; i < process_count; i++) {
        const process_t *p = &processes[i];
        if (!(p->kinds & kind) || !process_on(p, d)) continue;
        if (version == 1) {
            nvmlProcessInfo_v1_t *out = (nvmlProcessInfo_v1_t *)infos + k++;
            out->pid = p->pid;
            out->usedGpuMemory = p->used;
        } else {
            nvmlProcessInfo_v2_t *out = (nvmlProcessInfo_v2_t *)infos + k++;
            out->pid = p->pid;
            out->usedGpuMemory = p->used;
            out->gpuInstanceId = out->computeInstanceId = 0xFFFFFFFFu;
            if (p->slot >= 0 && p->slot < MAX_MIGS) {
                const device_t *mig = &migs[p->gpu][p->slot];
                out->gpuInstanceId = (unsigned)mig->gpu_instance_id;
                out->computeInstanceId = (unsigned)mig->compute_instance_id;
            }
        }
    }
    *count = n;
    return NVML_SUCCESS;
}

#define PROCESS_LIST(fn, kind, version)                                       \
    nvmlReturn_t fn(nvmlDevice_t d, unsigned *count, void *infos) {           \
        ENTER(fn, d);                                                         \
        return process_list(d, count, infos, kind, version);                  \
    }

PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses, KIND_C, 1)
PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses_v2, KIND_C, 2)
PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses_v3, KIND_C, 3)
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses, KIND_G, 1)
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses_v2, KIND_G, 2)
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses_v3, KIND_G, 3)
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses, KIND_M, 1)
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses_v2, KIND_M, 2)
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses_v3, KIND_M, 3)

typedef struct {
    unsigned pid;
    unsigned long long timeStamp;
    unsigned smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;

static unsigned long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
}

static unsigned long long sample_time(const process_t *p, unsigned long long now) {
    return p->sm_time == UNSET ? now : (unsigned long long)p->sm_time;
}

static unsigned percent_or_zero(long long value) {
    return value == UNSET ? 0 : (unsigned)value;
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d,
                                             nvmlProcessUtilizationSample_t *samples,
                                             unsigned *count, unsigned long long last_seen) {
    ENTER(nvmlDeviceGetProcessUtilization, d);
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned long long now = now_us();
    unsigned n = 0;
    for (int i = 0; i < process_count; i++) {
        const process_t *p = &processes[i];
        if (p->sm != UNSET && process_on(p, d) && sample_time(p, now) > last_seen) n++;
    }
    if (n == 0) return NVML_ERROR_NOT_FOUND;
    if (!samples || *count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    unsigned k = 0;
    for (int i = 0; i < process_count; i++) {
        const process_t *p = &processes[i];
        if (p->sm == UNSET || !process_on(p, d) || sample_time(p, now) <= last_seen) continue;
        nvmlProcessUtilizationSample_t *out = &samples[k++];
        out->pid = p->pid;
        out->timeStamp = sample_time(p, now);
        out->smUtil = (unsigned)p->sm;
        out->memUtil = percent_or_zero(p->mem);
        out->encUtil = percent_or_zero(p->enc);
        out->decUtil = percent_or_zero(p->dec);
    }
    *count = n;
    return NVML_SUCCESS;
}

/* ---- diagnosis: clock event reasons, row remapping, retired pages, XID events ---- */

#define NVML_ERROR_TIMEOUT 10
#define EVENT_XID_CRITICAL 0x8ULL
#define MAX_EVENT_SETS 8

static nvmlReturn_t clock_reasons(nvmlDevice_t d, unsigned long long *reasons) {
    REQUIRE(d->clocks_event_reasons);
    *reasons = (unsigned long long)d->clocks_event_reasons;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *reasons) {
    ENTER(nvmlDeviceGetCurrentClocksEventReasons, d);
    return clock_reasons(d, reasons);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *reasons) {
    ENTER(nvmlDeviceGetCurrentClocksThrottleReasons, d);
    return clock_reasons(d, reasons);
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *corrected, unsigned *uncorrected,
                                       unsigned *pending, unsigned *failure) {
    ENTER(nvmlDeviceGetRemappedRows, d);
    REQUIRE(d->remap_corrected);
    *corrected = (unsigned)d->remap_corrected;
    *uncorrected = (unsigned)(d->remap_uncorrected == UNSET ? 0 : d->remap_uncorrected);
    *pending = d->remap_pending > 0;
    *failure = d->remap_failure > 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int *pending) {
    ENTER(nvmlDeviceGetRetiredPagesPendingStatus, d);
    REQUIRE(d->retired_pending);
    *pending = d->retired_pending > 0;
    return NVML_SUCCESS;
}

static int parse_xid(char *cursor) {
    char *key, *value;
    if (xid_count >= MAX_XIDS) return 0;
    xids[xid_count].gpu = -1;
    xids[xid_count].code = 0;
    while (next_pair(&cursor, &key, &value)) {
        if (strcmp(key, "gpu") == 0) xids[xid_count].gpu = (int)number(value);
        else if (strcmp(key, "code") == 0) xids[xid_count].code = (unsigned long long)number(value);
    }
    xid_count++;
    return 1;
}

typedef struct event_set {
    int used;
    unsigned long long masks[MAX_GPUS];
    int delivered; /* the scenario's XIDs up to here were delivered to this set */
} event_set_t;

static event_set_t event_sets[MAX_EVENT_SETS];

typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType, eventData;
    unsigned gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

nvmlReturn_t nvmlEventSetCreate(event_set_t **set) {
    ENTER(nvmlEventSetCreate, NULL);
    for (int i = 0; i < MAX_EVENT_SETS; i++) {
        if (!event_sets[i].used) {
            memset(&event_sets[i], 0, sizeof event_sets[i]);
            event_sets[i].used = 1;
            *set = &event_sets[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_INSUFFICIENT_SIZE;
}

nvmlReturn_t nvmlEventSetFree(event_set_t *set) {
    ENTER(nvmlEventSetFree, NULL);
    set->used = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, event_set_t *set) {
    ENTER(nvmlDeviceRegisterEvents, d);
    if (d->is_mig || !set) return NVML_ERROR_INVALID_ARGUMENT;
    set->masks[d->gpu] |= types;
    return NVML_SUCCESS;
}

/* The next XID not yet delivered to the set, for a GPU it listens to, or -1; with state_lock held.
 * Each set has its own: a set made after another source's (one not shut down, its driver still
 * initialised) receives the scenario's XIDs as the first set did. */
static int next_xid(event_set_t *set) {
    while (set->delivered < xid_count) {
        int gpu = xids[set->delivered].gpu;
        int index = set->delivered++;
        if (gpu >= 0 && gpu < MAX_GPUS && (set->masks[gpu] & EVENT_XID_CRITICAL)) return index;
    }
    return -1;
}

/* Waits without the lock, like a real wait, so the sampler's calls go on meanwhile; and asleep,
 * like a real driver's wait in the kernel: woken when a call loads a new scenario (which may hold
 * an XID), else at the timeout, so a waiting event thread costs the process no CPU. A delay line
 * for it is slept out first, as for any call (a wait that hangs in the driver). */
static nvmlReturn_t event_wait(int fn, event_set_t *set, nvmlEventData_t *data, unsigned timeout_ms) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    call_t held = {0};
    begin_call(&held, fn, NULL, -1, 0); /* counted, and the lock held from here */
    for (int timed_out = 0;;) {
        maybe_reload(0);
        nvmlReturn_t result = init_refcount == 0 ? NVML_ERROR_UNINITIALIZED : rule_error(fn, -1, -1);
        int index = result == NVML_SUCCESS ? next_xid(set) : -1;
        if (index >= 0) {
            memset(data, 0, sizeof *data);
            data->device = &gpus[xids[index].gpu];
            data->eventType = EVENT_XID_CRITICAL;
            data->eventData = xids[index].code;
            data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFFu;
        }
        if (result == NVML_SUCCESS && index < 0 && timed_out) result = NVML_ERROR_TIMEOUT;
        if (result != NVML_SUCCESS || index >= 0) {
            pthread_mutex_unlock(&state_lock);
            return result;
        }
        timed_out = pthread_cond_timedwait(&scenario_loaded, &state_lock, &deadline) == ETIMEDOUT;
    }
}

nvmlReturn_t nvmlEventSetWait_v2(event_set_t *set, nvmlEventData_t *data, unsigned timeout_ms) {
    return event_wait(FN_nvmlEventSetWait_v2, set, data, timeout_ms);
}

nvmlReturn_t nvmlEventSetWait(event_set_t *set, nvmlEventData_t *data, unsigned timeout_ms) {
    return event_wait(FN_nvmlEventSetWait, set, data, timeout_ms);
}

/* ---- activity: GPM, energy, NVLink and PCIe link fields ------------------------
 *
 * Device keys (on a gpu or mig line), each NOT_SUPPORTED when left out:
 *   gpm=0|1                     nvmlGpmQueryDeviceSupport (a MIG device's
 *                               samples need its GPU's gpm=1)
 *   sm_active= sm_occupancy= tensor_active= dram_active= fp64_active=
 *   fp32_active= fp16_active=   GPM metrics, percent (fractions allowed)
 *   gpm_pcie_rx_mibs= gpm_pcie_tx_mibs= gpm_nvlink_rx_mibs= gpm_nvlink_tx_mibs=
 *                               GPM throughput metrics, MiB/s
 *   energy_mj=                  nvmlDeviceGetTotalEnergyConsumption and its field
 *   graphics_active=            GPM's graphics/compute engine activity, percent
 *   memory_temp=                the memory temperature field, °C
 *   pcie_replay=                the PCIe replay counter field
 *   pcie_gen= pcie_gen_max= pcie_width= pcie_width_max=
 *   nvlink_count= nvlink_version= nvlink_down=BITS (links present but down)
 *   nvlink_crc= nvlink_replay= nvlink_recovery= nvlink_error_link=L (default 0:
 *                               the link the error counters are on)
 *   nvlink_rx_kib= nvlink_tx_kib=  the NVLink data throughput counters (KiB)
 *
 * Each field has its classic call too, answering from the same scenario key:
 * nvmlDeviceGetTotalEnergyConsumption, nvmlDeviceGetPcieReplayCounter,
 * nvmlDeviceGetNvLinkState/Version/ErrorCounter (a link past the count is an
 * INVALID_ARGUMENT there); "field_error" lines refuse fields in the batch alone.
 *
 * The GPM structs are nvml.h's; fake_nvml_layout() reports their sizes and
 * offsets for the layout check (tests/test_fake_layout.py). GPM metrics are
 * the scenario's figures whatever the time between the two samples, but the
 * samples must be of one device, the second taken after the first.
 */

#define GPM_METRIC_MAX 333 /* nvml.h's NVML_GPM_METRIC_MAX (pynvml's array may be longer) */
#define GPM_SAMPLES 1024
#define NVLINK_MAX_LINKS 18
#define UNSET_FIGURE (-1.0)

typedef struct activity {
    long long gpm, energy_mj, pcie_gen, pcie_gen_max, pcie_width, pcie_width_max;
    long long memory_temp, pcie_replay;
    long long nvlink_count, nvlink_version, nvlink_down, nvlink_crc, nvlink_replay,
        nvlink_recovery, nvlink_error_link, nvlink_rx_kib, nvlink_tx_kib;
    double sm_active, sm_occupancy, tensor_active, dram_active, fp64_active, fp32_active,
        fp16_active, gpm_pcie_rx_mibs, gpm_pcie_tx_mibs, gpm_nvlink_rx_mibs, gpm_nvlink_tx_mibs;
    double graphics_active;
} activity_t;

static activity_t activities[MAX_GPUS + MAX_GPUS * MAX_MIGS];

static activity_t *activity_of(const device_t *d) {
    if (d->is_mig) return &activities[MAX_GPUS + d->gpu * MAX_MIGS + d->slot];
    return &activities[d->gpu];
}

/* field_error lines: field ids nvmlDeviceGetFieldValues refuses in their entries. */
#define MAX_FIELD_IDS 64
typedef struct field_error {
    int all, gpu, code, count;
    long long scope; /* UNSET: every scope */
    unsigned ids[MAX_FIELD_IDS];
} field_error_t;
static field_error_t field_errors[MAX_RULES];
static int field_error_count;

static void parse_field_error(char *cursor) {
    char *key, *value;
    if (field_error_count >= MAX_RULES) return;
    field_error_t *r = &field_errors[field_error_count++];
    memset(r, 0, sizeof *r);
    r->gpu = -1;
    r->scope = UNSET;
    r->code = NVML_ERROR_NOT_SUPPORTED;
    while (next_pair(&cursor, &key, &value)) {
        if (strcmp(key, "gpu") == 0) r->gpu = (int)number(value);
        else if (strcmp(key, "scope") == 0) r->scope = number(value);
        else if (strcmp(key, "code") == 0) r->code = (int)number(value);
        else if (strcmp(key, "ids") == 0) {
            r->all = strcmp(value, "*") == 0;
            for (char *id = value; !r->all && *id && r->count < MAX_FIELD_IDS;) {
                r->ids[r->count++] = (unsigned)strtoul(id, &id, 10);
                if (*id == ',') id++;
            }
        }
    }
}

/* The code a field_error line gives field `id` in `scope` on GPU `gpu`; NVML_SUCCESS when none does. */
static nvmlReturn_t field_error(int gpu, unsigned id, unsigned scope) {
    for (int i = 0; i < field_error_count; i++) {
        const field_error_t *r = &field_errors[i];
        if (r->gpu >= 0 && r->gpu != gpu) continue;
        if (r->scope != UNSET && (unsigned)r->scope != scope) continue;
        if (r->all) return r->code;
        for (int k = 0; k < r->count; k++)
            if (r->ids[k] == id) return r->code;
    }
    return NVML_SUCCESS;
}

static void reset_activity(void) {
    field_error_count = 0;
    for (size_t i = 0; i < sizeof activities / sizeof activities[0]; i++) {
        activity_t *a = &activities[i];
        for (long long *f = &a->gpm; f <= &a->nvlink_tx_kib; f++) *f = UNSET;
        for (double *f = &a->sm_active; f <= &a->graphics_active; f++) *f = UNSET_FIGURE;
    }
}

static int set_activity_field(const device_t *d, const char *key, const char *value) {
    static const struct { const char *key; size_t offset; int is_double; } fields[] = {
#define INTEGER(name) {#name, offsetof(activity_t, name), 0}
#define FIGURE(name) {#name, offsetof(activity_t, name), 1}
        INTEGER(gpm), INTEGER(energy_mj), INTEGER(pcie_gen), INTEGER(pcie_gen_max),
        INTEGER(pcie_width), INTEGER(pcie_width_max), INTEGER(nvlink_count),
        INTEGER(nvlink_version), INTEGER(nvlink_down), INTEGER(nvlink_crc),
        INTEGER(nvlink_replay), INTEGER(nvlink_recovery), INTEGER(nvlink_error_link),
        INTEGER(nvlink_rx_kib), INTEGER(nvlink_tx_kib),
        FIGURE(sm_active), FIGURE(sm_occupancy), FIGURE(tensor_active), FIGURE(dram_active),
        FIGURE(fp64_active), FIGURE(fp32_active), FIGURE(fp16_active),
        FIGURE(gpm_pcie_rx_mibs), FIGURE(gpm_pcie_tx_mibs), FIGURE(gpm_nvlink_rx_mibs),
        FIGURE(gpm_nvlink_tx_mibs),
        INTEGER(memory_temp), INTEGER(pcie_replay), FIGURE(graphics_active),
#undef INTEGER
#undef FIGURE
    };
    /* The device's slot in the table is known once gpu/slot are set (a mig line sets them first). */
    activity_t *a = activity_of(d);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (strcmp(key, fields[i].key) != 0) continue;
        if (fields[i].is_double) *(double *)((char *)a + fields[i].offset) = strtod(value, NULL);
        else *(long long *)((char *)a + fields[i].offset) = number(value);
        return 1;
    }
    return 0;
}

/* nvml.h's GPM structs. */
typedef struct gpm_sample {
    int used;
    const device_t *device; /* NULL until a sample is taken */
    unsigned long long taken; /* the sample's order */
} gpm_sample_t;

typedef struct {
    gpm_sample_t *handle;
} nvmlGpmSample_t;

typedef struct {
    char *shortName;
    char *longName;
    char *unit;
} nvmlGpmMetricMetricInfo_t;

typedef struct {
    unsigned metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    nvmlGpmMetricMetricInfo_t metricInfo;
} nvmlGpmMetric_t;

typedef struct {
    unsigned version;
    unsigned numMetrics;
    nvmlGpmSample_t sample1;
    nvmlGpmSample_t sample2;
    nvmlGpmMetric_t metrics[GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct {
    unsigned version;
    unsigned isSupportedDevice;
} nvmlGpmSupport_t;

static gpm_sample_t gpm_samples[GPM_SAMPLES];
static unsigned long long gpm_taken;

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t *support) {
    ENTER(nvmlGpmQueryDeviceSupport, d);
    if (!support) return NVML_ERROR_INVALID_ARGUMENT;
    if (support->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    support->isSupportedDevice = activity_of(d)->gpm == 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *sample) {
    ENTER(nvmlGpmSampleAlloc, NULL);
    if (!sample) return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < GPM_SAMPLES; i++) {
        if (!gpm_samples[i].used) {
            memset(&gpm_samples[i], 0, sizeof gpm_samples[i]);
            gpm_samples[i].used = 1;
            sample->handle = &gpm_samples[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_INSUFFICIENT_SIZE;
}

static int gpm_sample_valid(const gpm_sample_t *s) {
    return s >= gpm_samples && s < gpm_samples + GPM_SAMPLES && s->used;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
    ENTER(nvmlGpmSampleFree, NULL);
    if (!gpm_sample_valid(sample.handle)) return NVML_ERROR_INVALID_ARGUMENT;
    sample.handle->used = 0;
    return NVML_SUCCESS;
}

static nvmlReturn_t take_sample(const device_t *gpu, const device_t *device, nvmlGpmSample_t sample) {
    if (!gpm_sample_valid(sample.handle)) return NVML_ERROR_INVALID_ARGUMENT;
    if (activity_of(gpu)->gpm != 1) return NVML_ERROR_NOT_SUPPORTED;
    sample.handle->device = device;
    sample.handle->taken = ++gpm_taken;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t sample) {
    ENTER(nvmlGpmSampleGet, d);
    if (d->is_mig) return NVML_ERROR_INVALID_ARGUMENT; /* MIG: nvmlGpmMigSampleGet on the GPU */
    return take_sample(d, d, sample);
}

nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t d, unsigned gpu_instance_id, nvmlGpmSample_t sample) {
    ENTER(nvmlGpmMigSampleGet, d);
    if (d->is_mig) return NVML_ERROR_INVALID_ARGUMENT;
    for (int slot = 0; slot < MAX_MIGS; slot++) {
        const device_t *mig = &migs[d->gpu][slot];
        if (!mig->present || mig->gpu_instance_id != (long long)gpu_instance_id) continue;
        nvmlReturn_t error = rule_error(FN_nvmlGpmMigSampleGet, d->gpu, slot);
        if (error) return error;
        return take_sample(d, mig, sample);
    }
    return NVML_ERROR_NOT_FOUND;
}

static double gpm_metric(const activity_t *a, unsigned id) {
    switch (id) {
    case 1: return a->graphics_active;
    case 2: return a->sm_active;
    case 3: return a->sm_occupancy;
    case 5: return a->tensor_active;
    case 10: return a->dram_active;
    case 11: return a->fp64_active;
    case 12: return a->fp32_active;
    case 13: return a->fp16_active;
    case 20: return a->gpm_pcie_tx_mibs;
    case 21: return a->gpm_pcie_rx_mibs;
    case 60: return a->gpm_nvlink_rx_mibs;
    case 61: return a->gpm_nvlink_tx_mibs;
    default: return UNSET_FIGURE;
    }
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *get) {
    const device_t *device = NULL;
    if (get && gpm_sample_valid(get->sample1.handle)) device = get->sample1.handle->device;
    ENTER(nvmlGpmMetricsGet, device);
    if (!get) return NVML_ERROR_INVALID_ARGUMENT;
    if (get->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    const gpm_sample_t *first = get->sample1.handle, *second = get->sample2.handle;
    if (!gpm_sample_valid(first) || !gpm_sample_valid(second) || !first->device ||
        first->device != second->device || second->taken <= first->taken ||
        get->numMetrics > GPM_METRIC_MAX)
        return NVML_ERROR_INVALID_ARGUMENT;
    const activity_t *a = activity_of(device);
    for (unsigned i = 0; i < get->numMetrics; i++) {
        nvmlGpmMetric_t *metric = &get->metrics[i];
        double value = gpm_metric(a, metric->metricId);
        metric->nvmlReturn = value < 0 ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
        metric->value = value < 0 ? 0.0 : value;
        memset(&metric->metricInfo, 0, sizeof metric->metricInfo);
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *energy) {
    ENTER(nvmlDeviceGetTotalEnergyConsumption, d);
    REQUIRE(activity_of(d)->energy_mj);
    *energy = (unsigned long long)activity_of(d)->energy_mj;
    return NVML_SUCCESS;
}

#define PCIE_LINK(fn, name)                                 \
    nvmlReturn_t fn(nvmlDevice_t d, unsigned *value) {      \
        ENTER(fn, d);                                       \
        REQUIRE(activity_of(d)->name);                      \
        *value = (unsigned)activity_of(d)->name;            \
        return NVML_SUCCESS;                                \
    }

PCIE_LINK(nvmlDeviceGetCurrPcieLinkGeneration, pcie_gen)
PCIE_LINK(nvmlDeviceGetMaxPcieLinkGeneration, pcie_gen_max)
PCIE_LINK(nvmlDeviceGetCurrPcieLinkWidth, pcie_width)
PCIE_LINK(nvmlDeviceGetMaxPcieLinkWidth, pcie_width_max)
PCIE_LINK(nvmlDeviceGetPcieReplayCounter, pcie_replay)

/* The classic NVLink calls: NOT_SUPPORTED without NVLink, INVALID_ARGUMENT past the links present. */
static nvmlReturn_t nvlink_present(const activity_t *a, unsigned link) {
    if (a->nvlink_count == UNSET) return NVML_ERROR_NOT_SUPPORTED;
    return link < (unsigned)a->nvlink_count && link < NVLINK_MAX_LINKS ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, unsigned *active) {
    ENTER(nvmlDeviceGetNvLinkState, d);
    const activity_t *a = activity_of(d);
    nvmlReturn_t present = nvlink_present(a, link);
    if (present != NVML_SUCCESS) return present;
    *active = !((a->nvlink_down == UNSET ? 0 : a->nvlink_down) >> link & 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned link, unsigned *version) {
    ENTER(nvmlDeviceGetNvLinkVersion, d);
    const activity_t *a = activity_of(d);
    nvmlReturn_t present = nvlink_present(a, link);
    if (present != NVML_SUCCESS) return present;
    REQUIRE(a->nvlink_version);
    *version = (unsigned)a->nvlink_version;
    return NVML_SUCCESS;
}

/* nvmlNvLinkErrorCounter_t: DL_REPLAY 0, DL_RECOVERY 1, DL_CRC_FLIT 2, DL_CRC_DATA 3. The scenario's
   counts sit on nvlink_error_link (default 0), every other link answers 0, as the fields do. */
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned link, int counter,
                                             unsigned long long *value) {
    ENTER(nvmlDeviceGetNvLinkErrorCounter, d);
    const activity_t *a = activity_of(d);
    nvmlReturn_t present = nvlink_present(a, link);
    if (present != NVML_SUCCESS) return present;
    long long count = counter == 0 ? a->nvlink_replay : counter == 1 ? a->nvlink_recovery
                    : counter == 3 ? a->nvlink_crc : UNSET;
    REQUIRE(count);
    long long error_link = a->nvlink_error_link == UNSET ? 0 : a->nvlink_error_link;
    *value = (long long)link == error_link ? (unsigned long long)count : 0;
    return NVML_SUCCESS;
}

/* nvml.h's nvmlFieldValue_t. */
typedef struct {
    unsigned fieldId;
    unsigned scopeId;
    long long timestamp;
    long long latencyUsec;
    int valueType;
    nvmlReturn_t nvmlReturn;
    union {
        double dVal;
        unsigned uiVal;
        unsigned long ulVal;
        unsigned long long ullVal;
        long long sllVal;
        int siVal;
        unsigned short usVal;
    } value;
} nvmlFieldValue_t;

enum { VALUE_UINT = 1, VALUE_ULL = 3 };
enum {
    FI_ECC_DBE_VOL_TOTAL = 4, FI_ECC_DBE_AGG_TOTAL = 6, FI_NVLINK_CRC_TOTAL = 45,
    FI_NVLINK_REPLAY_TOTAL = 52, FI_NVLINK_RECOVERY_TOTAL = 59, FI_TOTAL_ENERGY = 83,
    FI_NVLINK_LINK_COUNT = 91, FI_NVLINK_THROUGHPUT_DATA_TX = 138,
    FI_NVLINK_THROUGHPUT_DATA_RX = 139, FI_NVLINK_ERROR_DL_REPLAY = 161,
    FI_NVLINK_ERROR_DL_RECOVERY = 162, FI_NVLINK_ERROR_DL_CRC = 163,
    FI_NVLINK_GET_STATE = 165, FI_NVLINK_GET_VERSION = 166, FI_ENERGY = 191,
    FI_RETIRED_PENDING = 31, FI_REMAPPED_COR = 142, FI_REMAPPED_UNC = 143,
    FI_REMAPPED_PENDING = 144, FI_REMAPPED_FAILURE = 145,
};
enum { FI_MEMORY_TEMP = 82, FI_PCIE_REPLAY_COUNTER = 94 };

/* One field's value (UNSET: NOT_SUPPORTED; -2: INVALID_ARGUMENT) and its type. */
static long long field_value(const device_t *d, unsigned id, unsigned scope, int *type) {
    const activity_t *a = activity_of(d);
    int link_ok = a->nvlink_count != UNSET && scope < NVLINK_MAX_LINKS;
    int present = link_ok && scope < (unsigned)a->nvlink_count;
    long long error_link = a->nvlink_error_link == UNSET ? 0 : a->nvlink_error_link;
    *type = VALUE_ULL;
    switch (id) {
    case FI_ECC_DBE_VOL_TOTAL: return d->ecc_volatile;
    case FI_ECC_DBE_AGG_TOTAL: return d->ecc_aggregate;
    case FI_TOTAL_ENERGY: case FI_ENERGY: return a->energy_mj;
    /* Row remapping and retired pages as nvmlDeviceGetRemappedRows and
       nvmlDeviceGetRetiredPagesPendingStatus answer them (NOT_SUPPORTED alike). */
    case FI_REMAPPED_COR: return d->remap_corrected;
    case FI_REMAPPED_UNC:
        return d->remap_corrected == UNSET ? UNSET : d->remap_uncorrected == UNSET ? 0 : d->remap_uncorrected;
    case FI_REMAPPED_PENDING: return d->remap_corrected == UNSET ? UNSET : d->remap_pending > 0;
    case FI_REMAPPED_FAILURE: return d->remap_corrected == UNSET ? UNSET : d->remap_failure > 0;
    case FI_RETIRED_PENDING: return d->retired_pending == UNSET ? UNSET : d->retired_pending > 0;
    case FI_MEMORY_TEMP: *type = VALUE_UINT; return a->memory_temp;
    case FI_PCIE_REPLAY_COUNTER: *type = VALUE_UINT; return a->pcie_replay;
    case FI_NVLINK_LINK_COUNT: *type = VALUE_UINT; return a->nvlink_count;
    case FI_NVLINK_CRC_TOTAL: return a->nvlink_count == UNSET ? UNSET : a->nvlink_crc;
    case FI_NVLINK_REPLAY_TOTAL: return a->nvlink_count == UNSET ? UNSET : a->nvlink_replay;
    case FI_NVLINK_RECOVERY_TOTAL: return a->nvlink_count == UNSET ? UNSET : a->nvlink_recovery;
    case FI_NVLINK_THROUGHPUT_DATA_TX:
    case FI_NVLINK_THROUGHPUT_DATA_RX: {
        /* Every link (scope UINT_MAX), or one: the traffic is all on link 0. */
        long long total = id == FI_NVLINK_THROUGHPUT_DATA_TX ? a->nvlink_tx_kib : a->nvlink_rx_kib;
        if (scope == 0xFFFFFFFFu || total == UNSET) return total;
        return present ? (scope == 0 ? total : 0) : -2;
    }
    case FI_NVLINK_GET_STATE:
        /* Like a real driver, a link index past the count answers "inactive", not an error. */
        *type = VALUE_UINT;
        if (!link_ok) return a->nvlink_count == UNSET ? UNSET : -2;
        return present && !((a->nvlink_down == UNSET ? 0 : a->nvlink_down) >> scope & 1);
    case FI_NVLINK_GET_VERSION:
        *type = VALUE_UINT;
        if (!present) return a->nvlink_count == UNSET ? UNSET : -2;
        return a->nvlink_version;
    case FI_NVLINK_ERROR_DL_REPLAY:
    case FI_NVLINK_ERROR_DL_RECOVERY:
    case FI_NVLINK_ERROR_DL_CRC: {
        if (!present) return a->nvlink_count == UNSET ? UNSET : -2;
        long long count = id == FI_NVLINK_ERROR_DL_CRC ? a->nvlink_crc
                        : id == FI_NVLINK_ERROR_DL_REPLAY ? a->nvlink_replay : a->nvlink_recovery;
        if (count == UNSET) return UNSET;
        return (long long)scope == error_link ? count : 0;
    }
    default: return UNSET;
    }
}

static nvmlReturn_t field_values(const device_t *d, int count, void *values) {
    if (count < 0 || (count > 0 && !values)) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlFieldValue_t *fields = values;
    long long now = (long long)now_us();
    for (int i = 0; i < count; i++) {
        nvmlFieldValue_t *f = &fields[i];
        int type;
        long long value = field_value(d, f->fieldId, f->scopeId, &type);
        nvmlReturn_t refused = field_error(d->gpu, f->fieldId, f->scopeId);
        f->timestamp = now;
        f->latencyUsec = 0;
        f->valueType = type;
        f->nvmlReturn = refused ? refused : value == UNSET ? NVML_ERROR_NOT_SUPPORTED
                      : value == -2 ? NVML_ERROR_INVALID_ARGUMENT : NVML_SUCCESS;
        memset(&f->value, 0, sizeof f->value);
        if (f->nvmlReturn != NVML_SUCCESS) continue;
        if (type == VALUE_UINT) f->value.uiVal = (unsigned)value;
        else f->value.ullVal = (unsigned long long)value;
    }
    return NVML_SUCCESS;
}

/* Sizes and offsets of the structs above, for the layout check against nvml.h (-1: unknown name). */
long long fake_nvml_layout(const char *name) {
    static const struct { const char *name; size_t value; } layout[] = {
        {"sizeof nvmlGpmSample_t", sizeof(nvmlGpmSample_t)},
        {"sizeof nvmlGpmMetric_t", sizeof(nvmlGpmMetric_t)},
        {"nvmlGpmMetric_t.nvmlReturn", offsetof(nvmlGpmMetric_t, nvmlReturn)},
        {"nvmlGpmMetric_t.value", offsetof(nvmlGpmMetric_t, value)},
        {"nvmlGpmMetric_t.metricInfo", offsetof(nvmlGpmMetric_t, metricInfo)},
        {"nvmlGpmMetricsGet_t.numMetrics", offsetof(nvmlGpmMetricsGet_t, numMetrics)},
        {"nvmlGpmMetricsGet_t.sample1", offsetof(nvmlGpmMetricsGet_t, sample1)},
        {"nvmlGpmMetricsGet_t.sample2", offsetof(nvmlGpmMetricsGet_t, sample2)},
        {"nvmlGpmMetricsGet_t.metrics", offsetof(nvmlGpmMetricsGet_t, metrics)},
        {"sizeof nvmlGpmMetricsGet_t", sizeof(nvmlGpmMetricsGet_t)},
        {"sizeof nvmlGpmSupport_t", sizeof(nvmlGpmSupport_t)},
        {"sizeof nvmlFieldValue_t", sizeof(nvmlFieldValue_t)},
        {"nvmlFieldValue_t.timestamp", offsetof(nvmlFieldValue_t, timestamp)},
        {"nvmlFieldValue_t.valueType", offsetof(nvmlFieldValue_t, valueType)},
        {"nvmlFieldValue_t.nvmlReturn", offsetof(nvmlFieldValue_t, nvmlReturn)},
        {"nvmlFieldValue_t.value", offsetof(nvmlFieldValue_t, value)},
    };
    for (size_t i = 0; i < sizeof layout / sizeof layout[0]; i++)
        if (strcmp(layout[i].name, name) == 0) return (long long)layout[i].value;
    return -1;
}

/* ---- test hooks (not part of NVML) -------------------------------------- */

unsigned long long fake_nvml_call_count(const char *name) {
    for (int f = 0; f < FN_COUNT; f++)
        if (strcmp(fn_names[f], name) == 0) return call_counts[f];
    return 0;
}

void fake_nvml_reset_counts(void) {
    pthread_mutex_lock(&state_lock);
    memset(call_counts, 0, sizeof call_counts);
    pthread_mutex_unlock(&state_lock);
}

int fake_nvml_event_sets_in_use(void) {
    pthread_mutex_lock(&state_lock);
    int in_use = 0;
    for (int i = 0; i < MAX_EVENT_SETS; i++) in_use += event_sets[i].used;
    pthread_mutex_unlock(&state_lock);
    return in_use;
}

int fake_nvml_sleeping(void) {
    pthread_mutex_lock(&state_lock);
    int sleeping = sleeping_calls;
    pthread_mutex_unlock(&state_lock);
    return sleeping;
}
