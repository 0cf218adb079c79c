"""Storage: what mathir writes appears whole or not at all, indexes are built once and
reused, and inputs are known by the SHA-256 of their bytes.

This package is the storage layer's API (``from mathir.storage import atomic_file``). Its
rooms:

* :mod:`~mathir.storage.files`: atomic files and directories, scratch folders, temporaries
  of dead writers removed, the writers' lock, file-system errors a user can fix;
* :mod:`~mathir.storage.paths`: output folders and files checked before any work, data
  folders searched following linked folders (:func:`walk_glob`);
* :mod:`~mathir.storage.roots`: where caches and indexes live (:func:`cache_dir`,
  :func:`index_root`);
* :mod:`~mathir.storage.fingerprints`: the SHA-256 of input files and folders, each
  file's digest cached by its stat key (:func:`file_fingerprint`);
* :mod:`~mathir.storage.indexes`: the build-or-reuse protocol of every index, its
  manifest, the records of its data files checked at every open (:func:`verify_index`),
  PyTerrier artifact metadata and package files.

The constants here are copies: to change one for a test, patch the module that reads it
(``mathir.storage.fingerprints.RACY_NS``). Nothing here imports pandas or PyTerrier.
"""

from mathir.storage.files import (
    USER_OS_ERRORS,
    atomic_directory,
    atomic_file,
    exclusive_lock,
    remove_stale_temporaries,
    scratch_directory,
)
from mathir.storage.fingerprints import (
    RACY_NS,
    REDIGEST_ENV,
    file_fingerprint,
    redigest_forced,
    sha256_file,
)
from mathir.storage.indexes import (
    DATA_FILES,
    IndexVerification,
    artifact_meta,
    build_or_reuse,
    data_file_problems,
    package_files,
    portable_manifest,
    read_manifest,
    record_data_files,
    require_data_files,
    verify_index,
    write_manifest,
)
from mathir.storage.paths import require_output_file, require_writable_dir, walk_glob
from mathir.storage.roots import CACHE_ENV, INDEX_ENV, cache_dir, index_root

__all__ = ["CACHE_ENV", "DATA_FILES", "INDEX_ENV", "RACY_NS", "REDIGEST_ENV", "USER_OS_ERRORS",
           "IndexVerification", "artifact_meta", "atomic_directory", "atomic_file",
           "build_or_reuse", "cache_dir", "data_file_problems", "exclusive_lock",
           "file_fingerprint", "index_root", "package_files", "portable_manifest",
           "read_manifest", "record_data_files", "redigest_forced", "remove_stale_temporaries",
           "require_data_files", "require_output_file", "require_writable_dir",
           "scratch_directory", "sha256_file", "verify_index", "walk_glob", "write_manifest"]
