/*
 * IdemKey.java: idempotency keys for the JVM that match the Rust crate `idemkey`.
 *
 * One file, Java 17, JDK only. Copy it into your project (add a `package` line), or run
 * `java/check.sh` to check it against `vectors.json`.
 *
 *   derive(namespace, parts...)  deterministic key for an intent with a natural identity
 *   mint()                       random key; call once per intent, persist it, reuse on retries
 *   fingerprint(parts...)        digest of the fields that define "the same request"
 *
 * Byte encoding (the same contract as idemkey::derive in Rust):
 *
 *   frame(b)  = length of b in bytes as an unsigned 64-bit big-endian integer, then b
 *   message   = frame("idemkey/derive/v1") || frame(utf8(namespace)) || frame(utf8(part)) ...
 *   key       = lowercase hex of the first 16 bytes of SHA-256(message)   (32 characters)
 *
 *   fingerprint = lowercase hex of SHA-256(frame("idemkey/fingerprint/v1") || frame(utf8(part)) ...)
 *
 * Strings are encoded as UTF-8 exactly as given: no normalization, no trimming. A String with
 * an unpaired surrogate has no UTF-8 form and is rejected (IllegalArgumentException), where
 * String.getBytes would silently substitute '?'.
 */

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

public final class IdemKey {
    /** Length of keys from derive() and mint(), in characters. */
    public static final int KEY_LENGTH = 32;
    /** Longest key Stripe accepts ("up to 255 characters"), in characters. */
    public static final int MAX_KEY_LENGTH = 255;

    private static final byte[] DERIVE_TAG = "idemkey/derive/v1".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] FINGERPRINT_TAG =
            "idemkey/fingerprint/v1".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private IdemKey() {}

    /**
     * Derives the key for an intent with a natural identity, e.g.
     * {@code derive("billing.monthly-charge", customerId, "2026-09")}. The same inputs give the
     * same 32-character lowercase hex key in every process, on every retry and replica.
     *
     * @throws NullPointerException if the namespace or a part is null
     * @throws IllegalArgumentException if a string contains an unpaired surrogate
     */
    public static String derive(String namespace, String... parts) {
        return derive(namespace, Arrays.asList(parts));
    }

    /** As {@link #derive(String, String...)}, with the parts as a list. */
    public static String derive(String namespace, List<String> parts) {
        MessageDigest sha = sha256();
        frame(sha, DERIVE_TAG);
        frame(sha, utf8(Objects.requireNonNull(namespace, "namespace")));
        for (String part : parts) {
            frame(sha, utf8(Objects.requireNonNull(part, "part")));
        }
        return hex(sha.digest(), KEY_LENGTH / 2);
    }

    /**
     * Mints a random key (128 bits from SecureRandom, 32 lowercase hex characters). Call it once
     * when the intent is formed, persist it with the intent before the first attempt, and reuse
     * it for every retry. Never call it inside a retry loop or an interceptor.
     */
    public static String mint() {
        byte[] bytes = new byte[KEY_LENGTH / 2];
        RANDOM.nextBytes(bytes);
        return hex(bytes, bytes.length);
    }

    /**
     * The fingerprint (64 lowercase hex characters) of the request fields that define "the same
     * request", in a fixed order, e.g. {@code fingerprint(amountMinor, currency, customerId)}.
     * Same key with a different fingerprint: refuse with 422.
     *
     * @throws NullPointerException if a part is null
     * @throws IllegalArgumentException if a part contains an unpaired surrogate
     */
    public static String fingerprint(String... parts) {
        return fingerprint(Arrays.asList(parts));
    }

    /** As {@link #fingerprint(String...)}, with the parts as a list. */
    public static String fingerprint(List<String> parts) {
        MessageDigest sha = sha256();
        frame(sha, FINGERPRINT_TAG);
        for (String part : parts) {
            frame(sha, utf8(Objects.requireNonNull(part, "part")));
        }
        return hex(sha.digest(), 32);
    }

    /** True if {@code key} is 1 to 255 visible ASCII characters (0x21..0x7E), as Rust's IdempotencyKey requires. */
    public static boolean isValidKey(String key) {
        if (key == null || key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
            return false;
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

    private static void frame(MessageDigest sha, byte[] bytes) {
        sha.update(ByteBuffer.allocate(Long.BYTES).putLong(bytes.length).array());
        sha.update(bytes);
    }

    private static byte[] utf8(String s) {
        try {
            ByteBuffer buf = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(s));
            byte[] out = new byte[buf.remaining()];
            buf.get(out);
            return out;
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("string has no UTF-8 form (unpaired surrogate)", e);
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform must provide SHA-256", e);
        }
    }

    private static String hex(byte[] bytes, int count) {
        char[] out = new char[count * 2];
        for (int i = 0; i < count; i++) {
            out[2 * i] = HEX[(bytes[i] >> 4) & 0x0f];
            out[2 * i + 1] = HEX[bytes[i] & 0x0f];
        }
        return new String(out);
    }

    /**
     * Checks derive() and fingerprint() against a vectors file.
     * Usage: {@code java IdemKey [path/to/vectors.json]}. Exit status 0 if all match, 1 on a
     * mismatch, 2 if the file cannot be read or parsed.
     */
    public static void main(String[] args) {
        Path path = Path.of(args.length > 0 ? args[0] : "vectors.json");
        Map<String, Object> root;
        try {
            root = asObject(new JsonReader(Files.readString(path, StandardCharsets.UTF_8)).readDocument());
        } catch (IOException | IllegalArgumentException e) {
            System.err.println("IdemKey: cannot read " + path + ": " + e.getMessage());
            System.exit(2);
            return;
        }
        int failures = 0;
        int derives = 0;
        int fingerprints = 0;
        for (Object item : asList(root.get("derive"))) {
            Map<String, Object> v = asObject(item);
            String got = derive(asString(v.get("namespace")), asStrings(v.get("parts")));
            derives++;
            if (!got.equals(asString(v.get("key")))) {
                failures++;
                System.out.println("MISMATCH derive " + v.get("name") + ": expected " + v.get("key") + ", got " + got);
            }
        }
        for (Object item : asList(root.get("fingerprint"))) {
            Map<String, Object> v = asObject(item);
            String got = fingerprint(asStrings(v.get("parts")));
            fingerprints++;
            if (!got.equals(asString(v.get("fingerprint")))) {
                failures++;
                System.out.println("MISMATCH fingerprint " + v.get("name") + ": expected " + v.get("fingerprint") + ", got " + got);
            }
        }
        String minted = mint();
        if (minted.length() != KEY_LENGTH || !isValidKey(minted) || minted.equals(mint())) {
            failures++;
            System.out.println("MISMATCH mint: bad key " + minted);
        }
        if (derives == 0 || failures > 0) {
            System.out.println(failures + " failed, " + derives + " derive and " + fingerprints + " fingerprint vectors checked");
            System.exit(1);
        }
        System.out.println("vectors OK: " + derives + " derive, " + fingerprints + " fingerprint, mint checked");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asObject(Object o) {
        if (!(o instanceof Map)) {
            throw new IllegalArgumentException("expected a JSON object");
        }
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> asList(Object o) {
        if (!(o instanceof List)) {
            throw new IllegalArgumentException("expected a JSON array");
        }
        return (List<Object>) o;
    }

    private static String asString(Object o) {
        if (!(o instanceof String)) {
            throw new IllegalArgumentException("expected a JSON string");
        }
        return (String) o;
    }

    private static List<String> asStrings(Object o) {
        List<String> out = new ArrayList<>();
        for (Object item : asList(o)) {
            out.add(asString(item));
        }
        return out;
    }

    /**
     * A small JSON reader, enough for vectors.json: objects, arrays, strings (all escapes,
     * including surrogate pairs), numbers, true, false, null. Errors are IllegalArgumentException.
     */
    static final class JsonReader {
        private final String s;
        private int i;

        JsonReader(String text) {
            this.s = text;
        }

        Object readDocument() {
            Object value = readValue();
            skipSpace();
            if (i != s.length()) {
                throw error("trailing characters");
            }
            return value;
        }

        private Object readValue() {
            skipSpace();
            if (i >= s.length()) {
                throw error("unexpected end of input");
            }
            char c = s.charAt(i);
            switch (c) {
                case '{':
                    return readObject();
                case '[':
                    return readArray();
                case '"':
                    return readString();
                case 't':
                    expectWord("true");
                    return Boolean.TRUE;
                case 'f':
                    expectWord("false");
                    return Boolean.FALSE;
                case 'n':
                    expectWord("null");
                    return null;
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        return readNumber();
                    }
                    throw error("unexpected character '" + c + "'");
            }
        }

        private Map<String, Object> readObject() {
            Map<String, Object> out = new LinkedHashMap<>();
            i++; // '{'
            skipSpace();
            if (peek() == '}') {
                i++;
                return out;
            }
            while (true) {
                skipSpace();
                if (peek() != '"') {
                    throw error("expected a member name");
                }
                String name = readString();
                skipSpace();
                expect(':');
                out.put(name, readValue());
                skipSpace();
                char c = next();
                if (c == '}') {
                    return out;
                }
                if (c != ',') {
                    throw error("expected ',' or '}'");
                }
            }
        }

        private List<Object> readArray() {
            List<Object> out = new ArrayList<>();
            i++; // '['
            skipSpace();
            if (peek() == ']') {
                i++;
                return out;
            }
            while (true) {
                out.add(readValue());
                skipSpace();
                char c = next();
                if (c == ']') {
                    return out;
                }
                if (c != ',') {
                    throw error("expected ',' or ']'");
                }
            }
        }

        private String readString() {
            i++; // opening quote
            StringBuilder out = new StringBuilder();
            while (true) {
                char c = next();
                if (c == '"') {
                    return out.toString();
                }
                if (c < 0x20) {
                    throw error("unescaped control character in string");
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = next();
                switch (e) {
                    case '"': out.append('"'); break;
                    case '\\': out.append('\\'); break;
                    case '/': out.append('/'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'n': out.append('\n'); break;
                    case 'r': out.append('\r'); break;
                    case 't': out.append('\t'); break;
                    case 'u':
                        if (i + 4 > s.length()) {
                            throw error("short \\u escape");
                        }
                        try {
                            // A surrogate pair arrives as two escapes, each appended as one char.
                            out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw error("bad \\u escape");
                        }
                        i += 4;
                        break;
                    default:
                        throw error("bad escape \\" + e);
                }
            }
        }

        private Object readNumber() {
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            try {
                return new java.math.BigDecimal(s.substring(start, i));
            } catch (NumberFormatException ex) {
                throw error("bad number");
            }
        }

        private void expectWord(String word) {
            if (!s.startsWith(word, i)) {
                throw error("expected " + word);
            }
            i += word.length();
        }

        private void expect(char c) {
            if (next() != c) {
                throw error("expected '" + c + "'");
            }
        }

        private char peek() {
            if (i >= s.length()) {
                throw error("unexpected end of input");
            }
            return s.charAt(i);
        }

        private char next() {
            char c = peek();
            i++;
            return c;
        }

        private void skipSpace() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
        }

        private IllegalArgumentException error(String message) {
            return new IllegalArgumentException("JSON: " + message + " at offset " + i);
        }
    }
}
