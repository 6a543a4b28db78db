// glibc's allocator settings, made from inside the process (src/boot/allocator.ts): what MALLOC_ARENA_MAX,
// MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ set when given in the environment, and malloc_trim. A Node-API
// addon, so one build serves every node of its architecture. Without glibc every call answers false and does nothing.
#include <stdlib.h>
#include <node_api.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

static napi_value boolean(napi_env env, int value) {
  napi_value result;
  napi_get_boolean(env, value != 0, &result);
  return result;
}

// set(option, value): mallopt; option is "arenaMax", "mmapThreshold" or "trimThreshold". True when glibc took it.
static napi_value set(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return boolean(env, 0);
  char name[32];
  size_t length = 0;
  int64_t value = 0;
  if (napi_get_value_string_utf8(env, argv[0], name, sizeof name, &length) != napi_ok) return boolean(env, 0);
  if (napi_get_value_int64(env, argv[1], &value) != napi_ok || value < 0 || value > 0x7fffffff) return boolean(env, 0);
#if defined(__GLIBC__)
  int option;
  if (length == 8 && __builtin_memcmp(name, "arenaMax", 8) == 0) option = M_ARENA_MAX;
  else if (length == 13 && __builtin_memcmp(name, "mmapThreshold", 13) == 0) option = M_MMAP_THRESHOLD;
  else if (length == 13 && __builtin_memcmp(name, "trimThreshold", 13) == 0) option = M_TRIM_THRESHOLD;
  else return boolean(env, 0);
  return boolean(env, mallopt(option, (int)value));
#else
  (void)length;
  return boolean(env, 0);
#endif
}

// trim(): malloc_trim(0), the free pages of every arena given back to the system. True when some were.
static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
#if defined(__GLIBC__)
  return boolean(env, malloc_trim(0));
#else
  return boolean(env, 0);
#endif
}

NAPI_MODULE_INIT() {
  napi_property_descriptor properties[] = {
    { "set", NULL, set, NULL, NULL, NULL, napi_default, NULL },
    { "trim", NULL, trim, NULL, NULL, NULL, napi_default, NULL },
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  return exports;
}
