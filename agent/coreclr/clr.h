/* SPDX-License-Identifier: MIT */
/*
 * The parts of the CLR profiling API (corprof.idl) and of the metadata API (cor.h) that
 * libjitrace-coreclr.so uses, as C: a COM interface is a pointer to a table of function
 * pointers whose first argument is the object. On Linux the runtime's types are fixed-width
 * (its PAL: ULONG and DWORD are 32 bits, WCHAR is UTF-16) and COM calls use the platform's
 * C calling convention. Slot numbers are those of the IDL, checked by static asserts.
 */
#ifndef JT_CLR_H
#define JT_CLR_H

#include <stddef.h>
#include <stdint.h>

typedef int32_t HRESULT;
typedef int32_t BOOL;
typedef uint32_t ULONG;
typedef uint32_t ULONG32;
typedef uint32_t DWORD;
typedef uint32_t mdToken;
typedef uint16_t WCHAR;
typedef uintptr_t UINT_PTR;
typedef UINT_PTR FunctionID;
typedef UINT_PTR ModuleID;
typedef UINT_PTR ReJITID;
typedef UINT_PTR COR_PRF_ELT_INFO;

#define S_OK ((HRESULT)0)
#define S_FALSE ((HRESULT)1)
#define E_NOINTERFACE ((HRESULT)0x80004002)
#define E_FAIL ((HRESULT)0x80004005)
#define CLASS_E_NOAGGREGATION ((HRESULT)0x80040110)
#define CLASS_E_CLASSNOTAVAILABLE ((HRESULT)0x80040111)

typedef struct {
	uint32_t d1;
	uint16_t d2, d3;
	uint8_t d4[8];
} GUID;

/* ---- the events a profiler asks for (COR_PRF_MONITOR, COR_PRF_HIGH_MONITOR) ---- */
#define COR_PRF_MONITOR_JIT_COMPILATION 0x00000020
#define COR_PRF_MONITOR_EXCEPTIONS 0x00000040
#define COR_PRF_MONITOR_ENTERLEAVE 0x00001000
#define COR_PRF_MONITOR_CACHE_SEARCHES 0x00020000
#define COR_PRF_DISABLE_INLINING 0x00200000
#define COR_PRF_ENABLE_FRAME_INFO 0x08000000
#define COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS 0x00000004

#define COR_PRF_CACHED_FUNCTION_FOUND 0

typedef struct {
	UINT_PTR startAddress;
	size_t size;
} COR_PRF_CODE_INFO;

typedef struct {
	FunctionID functionId;
	ReJITID reJitId;
} COR_PRF_FUNCTION;

/* ---- ICorProfilerCallback .. ICorProfilerCallback11 (what the runtime calls) ---- */

/* Slots of the callback vtable jitrace fills: IUnknown's three, then corprof.idl's order
 * (Initialize is the first callback, LoadAsNotificationOnly of version 11 the last). */
enum jt_clr_callback_slot {
	CB_QUERY_INTERFACE = 0,
	CB_ADD_REF = 1,
	CB_RELEASE = 2,
	CB_INITIALIZE = 3,
	CB_SHUTDOWN = 4,
	CB_JIT_COMPILATION_FINISHED = 24,
	CB_JIT_CACHED_FUNCTION_SEARCH_STARTED = 25,
	CB_JIT_CACHED_FUNCTION_SEARCH_FINISHED = 26,
	CB_JIT_INLINING = 28,
	CB_EXCEPTION_UNWIND_FUNCTION_ENTER = 62,
	CB_EXCEPTION_UNWIND_FUNCTION_LEAVE = 63,
	CB_EXCEPTION_CATCHER_ENTER = 66,
	CB_INITIALIZE_FOR_ATTACH = 80,		/* version 3 */
	CB_PROFILER_ATTACH_COMPLETE = 81,
	CB_REJIT_COMPILATION_FINISHED = 85,	/* version 4 */
	CB_DYNAMIC_METHOD_JIT_COMPILATION_FINISHED = 93,	/* version 8 */
	CB_DYNAMIC_METHOD_UNLOADED = 94,	/* version 9 */
	CB_LOAD_AS_NOTIFICATION_ONLY = 97,	/* version 11 */
	CB_NR = 98,
};

/* ---- ICorProfilerInfo9 (what the runtime offers; only the slots used are named) ---- */

struct jt_clr_info;
typedef UINT_PTR (*jt_clr_mapper2)(FunctionID fid, void *data, BOOL *hook);
typedef void (*jt_clr_elt3)(UINT_PTR function_or_client_id, COR_PRF_ELT_INFO info);

struct jt_clr_info_vtbl {
	HRESULT (*QueryInterface)(struct jt_clr_info *self, const GUID *iid, void **out);
	ULONG (*AddRef)(struct jt_clr_info *self);
	ULONG (*Release)(struct jt_clr_info *self);
	void *info_0_12[13];
	HRESULT (*SetEventMask)(struct jt_clr_info *self, DWORD events);		/* 13 */
	void *info_14_15[2];
	HRESULT (*GetTokenAndMetaDataFromFunction)(struct jt_clr_info *self, FunctionID fid,
						   const GUID *iid, void **import,
						   mdToken *token);		/* 16 */
	void *info_17_38[22];
	HRESULT (*GetCodeInfo2)(struct jt_clr_info *self, FunctionID fid, ULONG32 cap,
				ULONG32 *n, COR_PRF_CODE_INFO *infos);			/* 39 */
	void *info2_40_55[16];
	HRESULT (*SetFunctionIDMapper2)(struct jt_clr_info *self, jt_clr_mapper2 mapper,
					void *data);					/* 56 */
	void *info3_57_58[2];
	HRESULT (*SetEnterLeaveFunctionHooks3WithInfo)(struct jt_clr_info *self,
						       jt_clr_elt3 enter, jt_clr_elt3 leave,
						       jt_clr_elt3 tailcall);		/* 59 */
	void *info3_60_75[16];
	HRESULT (*EnumJITedFunctions2)(struct jt_clr_info *self, void **functions);	/* 76 */
	void *info4_77_78[2];
	HRESULT (*SetEventMask2)(struct jt_clr_info *self, DWORD low, DWORD high);	/* 79 */
	void *info6_80_83[4];
	HRESULT (*IsFunctionDynamic)(struct jt_clr_info *self, FunctionID fid,
				     BOOL *dynamic);					/* 84 */
	void *info8_85;
	HRESULT (*GetDynamicFunctionInfo)(struct jt_clr_info *self, FunctionID fid,
					  ModuleID *module, const uint8_t **sig, ULONG *sig_len,
					  ULONG cap, ULONG *len, WCHAR *name);		/* 86 */
	HRESULT (*GetNativeCodeStartAddresses)(struct jt_clr_info *self, FunctionID fid,
					       ReJITID rejit, ULONG32 cap, ULONG32 *n,
					       UINT_PTR *starts);			/* 87 */
	void *info9_88;
	HRESULT (*GetCodeInfo4)(struct jt_clr_info *self, UINT_PTR start, ULONG32 cap,
				ULONG32 *n, COR_PRF_CODE_INFO *infos);			/* 89 */
};

#define JT_CLR_SLOT(type, member, n) \
	_Static_assert(offsetof(struct type, member) == (3 + (n)) * sizeof(void *), \
		       #member " is slot " #n)
JT_CLR_SLOT(jt_clr_info_vtbl, SetEventMask, 13);
JT_CLR_SLOT(jt_clr_info_vtbl, GetTokenAndMetaDataFromFunction, 16);
JT_CLR_SLOT(jt_clr_info_vtbl, GetCodeInfo2, 39);
JT_CLR_SLOT(jt_clr_info_vtbl, SetFunctionIDMapper2, 56);
JT_CLR_SLOT(jt_clr_info_vtbl, SetEnterLeaveFunctionHooks3WithInfo, 59);
JT_CLR_SLOT(jt_clr_info_vtbl, EnumJITedFunctions2, 76);
JT_CLR_SLOT(jt_clr_info_vtbl, SetEventMask2, 79);
JT_CLR_SLOT(jt_clr_info_vtbl, IsFunctionDynamic, 84);
JT_CLR_SLOT(jt_clr_info_vtbl, GetDynamicFunctionInfo, 86);
JT_CLR_SLOT(jt_clr_info_vtbl, GetNativeCodeStartAddresses, 87);
JT_CLR_SLOT(jt_clr_info_vtbl, GetCodeInfo4, 89);

struct jt_clr_info {
	const struct jt_clr_info_vtbl *vtbl;
};

/* ---- ICorProfilerFunctionEnum ---- */

struct jt_clr_function_enum;

struct jt_clr_function_enum_vtbl {
	HRESULT (*QueryInterface)(struct jt_clr_function_enum *self, const GUID *iid, void **out);
	ULONG (*AddRef)(struct jt_clr_function_enum *self);
	ULONG (*Release)(struct jt_clr_function_enum *self);
	void *skip_reset_clone_count[4];
	HRESULT (*Next)(struct jt_clr_function_enum *self, ULONG n, COR_PRF_FUNCTION *out,
			ULONG *fetched);						/* 4 */
};
JT_CLR_SLOT(jt_clr_function_enum_vtbl, Next, 4);

struct jt_clr_function_enum {
	const struct jt_clr_function_enum_vtbl *vtbl;
};

/* ---- IMetaDataImport (cor.h) ---- */

struct jt_clr_import;

struct jt_clr_import_vtbl {
	HRESULT (*QueryInterface)(struct jt_clr_import *self, const GUID *iid, void **out);
	ULONG (*AddRef)(struct jt_clr_import *self);
	ULONG (*Release)(struct jt_clr_import *self);
	void *md_0_8[9];
	HRESULT (*GetTypeDefProps)(struct jt_clr_import *self, mdToken td, WCHAR *name, ULONG cap,
				   ULONG *len, DWORD *flags, mdToken *extends);	/* 9 */
	void *md_10;
	HRESULT (*GetTypeRefProps)(struct jt_clr_import *self, mdToken tr, mdToken *scope,
				   WCHAR *name, ULONG cap, ULONG *len);		/* 11 */
	void *md_12_26[15];
	HRESULT (*GetMethodProps)(struct jt_clr_import *self, mdToken md, mdToken *type,
				  WCHAR *name, ULONG cap, ULONG *len, DWORD *attr,
				  const uint8_t **sig, ULONG *sig_len, ULONG *rva,
				  DWORD *impl);						/* 27 */
	void *md_28_58[31];
	HRESULT (*GetNestedClassProps)(struct jt_clr_import *self, mdToken nested,
				       mdToken *enclosing);				/* 59 */
};
JT_CLR_SLOT(jt_clr_import_vtbl, GetTypeDefProps, 9);
JT_CLR_SLOT(jt_clr_import_vtbl, GetTypeRefProps, 11);
JT_CLR_SLOT(jt_clr_import_vtbl, GetMethodProps, 27);
JT_CLR_SLOT(jt_clr_import_vtbl, GetNestedClassProps, 59);

struct jt_clr_import {
	const struct jt_clr_import_vtbl *vtbl;
};

/* a TypeDef's visibility: nested types are 2 to 7 */
#define TD_VISIBILITY_MASK 0x7
#define TD_NESTED_PUBLIC 0x2

#endif
