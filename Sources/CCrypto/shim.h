// OpenSSL's libcrypto (Debian: libssl-dev): SHA-256 and constant-time comparison for keys and tokens.
#include <openssl/evp.h>
#include <openssl/crypto.h>
