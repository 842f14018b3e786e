// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity ^0.8.24;

/// @title TlsproofAttestations
/// @notice Checks tlsproof attestations that a trusted verifier signed with secp256k1, and
/// exposes the bytes of disclosed ranges once they match the attested digests, and the
/// statements proven about hidden values of requests and responses, which need no disclosure.
/// @dev The byte layout, DOMAIN and checks are specified in docs/attestation.md. The
/// attestation is read in place with calldata slices and is never copied to memory. The errors
/// are named as the Rust decoder's and presentation checker's (src/attestation). The signature
/// is checked before the encoding (Rust decodes first), so a forged attestation is refused
/// with SignatureMismatch whatever it contains.
contract TlsproofAttestations {
    /// @notice The trusted verifier: the Ethereum address of its secp256k1 key.
    address public immutable verifier;

    /// @dev What is signed is DOMAIN ‖ attestation: 0x19 "tlsproof attestation".
    bytes constant DOMAIN = hex"19746c7370726f6f66206174746573746174696f6e";

    /// @dev "TLSPROOF" as a big-endian integer.
    uint256 private constant MAGIC = 0x544c5350524f4f46;
    uint256 private constant FORMAT_VERSION = 4;
    /// @dev Signature scheme code of secp256k1 over Keccak-256.
    uint256 private constant SCHEME_SECP256K1 = 1;
    /// @dev secp256k1's group order n, and n / 2 (the highest canonical s).
    uint256 private constant N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141;
    uint256 private constant HALF_N = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;
    uint256 private constant MAX_NAME = 253;
    uint256 private constant MAX_RANGES = 4096;
    /// @dev Bytes per attested range: start (8), end (8), digest (32).
    uint256 private constant RANGE_BYTES = 48;
    uint256 private constant MAX_EXCHANGES = 16;
    /// @dev Bytes per exchange: request start, end, response start, end (8 each).
    uint256 private constant EXCHANGE_BYTES = 32;
    /// @dev Offset of the server name (after its length byte at 30).
    uint256 private constant NAME_AT = 31;
    /// @dev Most statements about hidden values.
    uint256 private constant MAX_STATEMENTS = 16;
    /// @dev Most ranges of one statement's value, and bytes per range: start (8), end (8).
    uint256 private constant MAX_VALUE_RANGES = 64;
    uint256 private constant VALUE_RANGE_BYTES = 16;
    /// @dev The longest statement text, in bytes.
    uint256 private constant MAX_TEXT = 4096;

    /// @notice What an attestation says, besides its ranges.
    struct Header {
        uint16 protocolVersion;
        /// @dev 0 proxy (the verifier dialed the server), 1 MPC.
        uint8 mode;
        /// @dev 0x0303 (TLS 1.2) or 0x0304 (TLS 1.3).
        uint16 tlsVersion;
        uint16 cipherSuite;
        uint16 group;
        /// @dev Unix seconds.
        uint64 connectionTime;
        /// @dev The port dialed in proxy mode; 0 in MPC mode.
        uint16 port;
        string serverName;
        uint64 sentLength;
        uint64 receivedLength;
        /// @dev 0 open (possibly cut off), 1 close_notify, 2 fatal alert.
        uint8 receivedEnding;
        /// @dev The HTTP requests of the session, each paired with its response (`exchange`).
        uint8 exchangeCount;
        /// @dev The statements proven about hidden values of the requests and responses (`statement`).
        uint8 statementCount;
    }

    /// @notice Where one request and the response that answers it are in the transcript.
    struct Exchange {
        uint64 requestStart;
        uint64 requestEnd;
        /// @dev responseStart == responseEnd: no byte answered the request.
        uint64 responseStart;
        uint64 responseEnd;
    }

    /// @dev Where one checked direction's ranges are in the attestation.
    struct Direction {
        uint64 len;
        uint8 ending;
        uint256 revealedAt;
        uint256 revealedCount;
        uint256 committedAt;
        uint256 committedCount;
    }

    // Signature (Rust: SignatureError)
    error WrongLength(uint256 got);
    error BadRecoveryByte(uint8 v);
    error NonCanonical();
    error SignatureMismatch();
    // Decoding (Rust: AttestationError)
    error Truncated();
    error TrailingBytes(uint256 count);
    error BadMagic();
    error UnsupportedFormat(uint16 version);
    error SchemeMismatch(uint8 scheme);
    error UnknownMode(uint8 mode);
    error UnknownTlsVersion(uint16 version);
    error BadPort(uint8 mode, uint16 port);
    error BadServerName();
    error BadEnding(uint8 direction, bytes2 ending);
    error TooManyRanges(uint8 direction, uint256 count);
    error RangeOutsideTranscript(uint8 direction, uint64 start, uint64 end, uint64 len);
    error RangesOutOfOrder(uint8 direction);
    error BadExchangeCount(uint256 count);
    error ExchangesNotTiling(uint8 direction);
    error NoExchange(uint256 index, uint256 count);
    error TooManyStatements(uint256 count);
    error BadStatementExchange(uint256 statement, uint8 exchange, uint256 count);
    error BadStatementDirection(uint256 statement, uint8 direction);
    error BadValueRangeCount(uint256 statement, uint256 count);
    /// @dev `direction` 0: outside the exchange's request; 1: outside its response.
    error ValueOutsideMessage(uint256 statement, uint8 direction, uint64 start, uint64 end);
    error ValueRangesOutOfOrder(uint256 statement);
    error BadStatementLength(uint256 statement, uint256 len);
    error NoStatement(uint256 index, uint256 count);
    // Disclosures (Rust: PresentationError)
    error BadDirection(uint8 direction);
    error NotAttested(uint8 direction, uint64 start, uint64 end);
    error LengthMismatch(uint8 direction, uint64 start, uint64 end, uint256 got);
    error OpeningMismatch(uint8 direction, uint64 start, uint64 end);

    /// @param verifier_ The address of the verifier's secp256k1 key (`secp256k1:0x…`).
    constructor(address verifier_) {
        verifier = verifier_;
    }

    /// @notice Reverts unless `signature` (r ‖ s ‖ v, low s, v 27 or 28) is the verifier's
    /// signature over Keccak-256(DOMAIN ‖ attestation).
    function checkSignature(bytes calldata attestation, bytes calldata signature) public view {
        if (signature.length != 65) revert WrongLength(signature.length);
        uint256 r = uint256(bytes32(signature[0:32]));
        uint256 s = uint256(bytes32(signature[32:64]));
        uint8 v = uint8(signature[64]);
        if (v != 27 && v != 28) revert BadRecoveryByte(v);
        if (r == 0 || r >= N || s == 0 || s > HALF_N) revert NonCanonical();
        address signer = ecrecover(keccak256(abi.encodePacked(DOMAIN, attestation)), v, bytes32(r), bytes32(s));
        if (signer == address(0) || signer != verifier) revert SignatureMismatch();
    }

    /// @notice The attested header, after checking the signature and the whole encoding.
    function header(bytes calldata attestation, bytes calldata signature) external view returns (Header memory h) {
        checkSignature(attestation, signature);
        (h,,) = _decode(attestation);
    }

    /// @notice Exchange `index` (0 first) of the session, after checking the signature and the
    /// whole encoding: where its request is in the sent bytes, and its response in the received.
    function exchange(bytes calldata attestation, bytes calldata signature, uint256 index)
        external
        view
        returns (Exchange memory x)
    {
        checkSignature(attestation, signature);
        (Header memory h,, uint256 statementsAt) = _decode(attestation);
        if (index >= h.exchangeCount) revert NoExchange(index, h.exchangeCount);
        // the exchanges end where the statements start
        uint256 p = statementsAt - EXCHANGE_BYTES * (h.exchangeCount - index);
        x.requestStart = uint64(_read(attestation, p, 8));
        x.requestEnd = uint64(_read(attestation, p + 8, 8));
        x.responseStart = uint64(_read(attestation, p + 16, 8));
        x.responseEnd = uint64(_read(attestation, p + 24, 8));
    }

    /// @notice Checks that `data` is the attested range [start, end) of `direction`
    /// (0 sent, 1 received) with `opening` (its salt or blinder), and returns it with the
    /// certified server name and connection time.
    /// @dev The range must be exactly a revealed range or a commitment; a sub-range cannot be
    /// opened. Every refusal reverts with a custom error.
    function disclosed(
        bytes calldata attestation,
        bytes calldata signature,
        uint8 direction,
        uint64 start,
        uint64 end,
        bytes calldata data,
        bytes16 opening
    ) external view returns (string memory serverName, uint64 connectionTime, bytes memory) {
        checkSignature(attestation, signature);
        if (direction > 1) revert BadDirection(direction);
        (Header memory h, Direction[2] memory d,) = _decode(attestation);
        _checkDisclosure(attestation, d[direction], direction, start, end, data, opening);
        return (h.serverName, h.connectionTime, data);
    }

    /// @notice Statement `index` (0 first) of the session, after checking the signature and the
    /// whole encoding, with the certified server name and connection time: a fact proven in
    /// zero knowledge about a hidden value of a request's or a response's body, which no
    /// disclosure needs. Compare `text` with the statement you expect, e.g.
    /// `keccak256(text) == keccak256("account.balance.amount >= 1000")`, and `direction` with
    /// the body you expect it about: the same path may name a field of either.
    /// @return serverName The name the server's certificate was validated for.
    /// @return connectionTime Unix seconds.
    /// @return exchangeNumber The exchange whose request or response holds the value, from 1
    /// (`exchange(attestation, signature, exchangeNumber - 1)` is where they are).
    /// @return direction 0 (sent): the value is in the exchange's request; 1 (received): in its
    /// response. The numbering of `disclosed`'s direction.
    /// @return valueLength The hidden value's length in bytes, which is public.
    /// @return text The statement's canonical text (docs/attestation.md). The contract checks
    /// its length, not its grammar: the verifier signed it.
    function statement(bytes calldata attestation, bytes calldata signature, uint256 index)
        external
        view
        returns (
            string memory serverName,
            uint64 connectionTime,
            uint8 exchangeNumber,
            uint8 direction,
            uint64 valueLength,
            bytes calldata text
        )
    {
        checkSignature(attestation, signature);
        return _statement(attestation, index);
    }

    /// @dev Statement `index` of a whole checked attestation, as `statement` returns it.
    function _statement(bytes calldata a, uint256 index)
        private
        pure
        returns (
            string memory serverName,
            uint64 connectionTime,
            uint8 exchangeNumber,
            uint8 direction,
            uint64 valueLength,
            bytes calldata text
        )
    {
        uint256 p;
        {
            // the header in its own scope, to keep the stack shallow
            (Header memory h,, uint256 statementsAt) = _decode(a);
            if (index >= h.statementCount) revert NoStatement(index, h.statementCount);
            (serverName, connectionTime) = (h.serverName, h.connectionTime);
            p = statementsAt + 1;
        }
        // _decode checked the statements whole: skip to the one asked for (each: exchange,
        // direction, range count, ranges, text length, text)
        for (uint256 i = 0; i < index; ++i) {
            uint256 textAt = p + 3 + VALUE_RANGE_BYTES * _read(a, p + 2, 1) + 2;
            p = textAt + _read(a, textAt - 2, 2);
        }
        (exchangeNumber, direction, valueLength, text) = _statementAt(a, p);
    }

    /// @dev The checked statement at offset p: its exchange, direction, value length and text.
    function _statementAt(bytes calldata a, uint256 p)
        private
        pure
        returns (uint8 exchangeNumber, uint8 direction, uint64 valueLength, bytes calldata text)
    {
        exchangeNumber = uint8(_read(a, p, 1));
        direction = uint8(_read(a, p + 1, 1));
        uint256 rangesEnd = p + 3 + VALUE_RANGE_BYTES * _read(a, p + 2, 1);
        for (uint256 q = p + 3; q < rangesEnd; q += VALUE_RANGE_BYTES) {
            uint256 word;
            assembly {
                word := calldataload(add(a.offset, q))
            }
            valueLength += uint64(word >> 128) - uint64(word >> 192);
        }
        text = a[rangesEnd + 2:rangesEnd + 2 + _read(a, rangesEnd, 2)];
    }

    /// @dev The presentation checks in the order docs/attestation.md lists them, as the Rust
    /// and JS checkers do.
    function _checkDisclosure(
        bytes calldata a,
        Direction memory d,
        uint8 direction,
        uint64 start,
        uint64 end,
        bytes calldata data,
        bytes16 opening
    ) private pure {
        if (start >= end || end > d.len) revert RangeOutsideTranscript(direction, start, end, d.len);
        bytes16 range = bytes16((uint128(start) << 64) | uint128(end));
        (bool found, bool opens) = _match(a, d, range, sha256(abi.encodePacked(data, opening)));
        if (!found) revert NotAttested(direction, start, end);
        if (data.length != end - start) revert LengthMismatch(direction, start, end, data.length);
        if (!opens) revert OpeningMismatch(direction, start, end);
    }

    /// @dev Whether the direction attests `range` (revealed or committed), and whether one of
    /// its entries for it has `digest`: the same range may be in both lists, any entry opens.
    function _match(bytes calldata a, Direction memory d, bytes16 range, bytes32 digest)
        private
        pure
        returns (bool found, bool opens)
    {
        (found, opens) = _find(a, d.revealedAt, d.revealedCount, range, digest);
        if (!opens) {
            bool committed;
            (committed, opens) = _find(a, d.committedAt, d.committedCount, range, digest);
            found = found || committed;
        }
    }

    /// @dev Whether a list has an entry for `range`, and whether one of those has `digest`.
    /// The list's bounds were checked by _ranges.
    function _find(bytes calldata a, uint256 pos, uint256 count, bytes16 range, bytes32 digest)
        private
        pure
        returns (bool found, bool opens)
    {
        uint256 base;
        assembly {
            base := add(a.offset, pos)
        }
        for (uint256 i = 0; i < count; ++i) {
            bytes32 word;
            bytes32 entryDigest;
            assembly {
                let q := add(base, mul(i, RANGE_BYTES))
                word := calldataload(q)
                entryDigest := calldataload(add(q, 16))
            }
            // the first 16 bytes: start ‖ end
            if (bytes16(word) == range) {
                found = true;
                if (entryDigest == digest) return (true, true);
            }
        }
    }

    /// @dev Decodes and checks the whole attestation as the Rust decoder does (but for the
    /// statements' texts, of which it checks the length), returning its header, where each
    /// direction's ranges are, and where the statements start (their count byte).
    function _decode(bytes calldata a)
        private
        pure
        returns (Header memory h, Direction[2] memory d, uint256 statementsAt)
    {
        if (_read(a, 0, 8) != MAGIC) revert BadMagic();
        uint256 format = _read(a, 8, 2);
        if (format != FORMAT_VERSION) revert UnsupportedFormat(uint16(format));
        uint256 scheme = _read(a, 10, 1);
        // Only secp256k1 can be checked here: Ed25519 (2) and unknown codes are both refused.
        if (scheme != SCHEME_SECP256K1) revert SchemeMismatch(uint8(scheme));
        h.protocolVersion = uint16(_read(a, 11, 2));
        h.mode = uint8(_read(a, 13, 1));
        if (h.mode > 1) revert UnknownMode(h.mode);
        h.tlsVersion = uint16(_read(a, 14, 2));
        if (h.tlsVersion != 0x0303 && h.tlsVersion != 0x0304) revert UnknownTlsVersion(h.tlsVersion);
        h.cipherSuite = uint16(_read(a, 16, 2));
        h.group = uint16(_read(a, 18, 2));
        h.connectionTime = uint64(_read(a, 20, 8));
        h.port = uint16(_read(a, 28, 2));
        if ((h.mode == 0) == (h.port == 0)) revert BadPort(h.mode, h.port);
        uint256 nameEnd = NAME_AT + _read(a, NAME_AT - 1, 1);
        if (nameEnd > a.length) revert Truncated();
        _checkName(a[NAME_AT:nameEnd]);
        h.serverName = string(a[NAME_AT:nameEnd]);
        uint256 p;
        (d[0], p) = _direction(a, nameEnd, 0);
        (d[1], p) = _direction(a, p, 1);
        uint256 exchangesAt = p;
        (h.exchangeCount, statementsAt) = _exchanges(a, p, d[0].len, d[1].len);
        (h.statementCount, p) = _statements(a, statementsAt, exchangesAt, h.exchangeCount);
        if (p != a.length) revert TrailingBytes(a.length - p);
        h.sentLength = d[0].len;
        h.receivedLength = d[1].len;
        h.receivedEnding = d[1].ending;
    }

    /// @dev 1 to 253 of: lower-case ASCII letters, digits, '.', '-', '_', ':'.
    function _checkName(bytes calldata name) private pure {
        if (name.length == 0 || name.length > MAX_NAME) revert BadServerName();
        for (uint256 i = 0; i < name.length; ++i) {
            bytes1 c = name[i];
            bool ok = (c >= "a" && c <= "z") || (c >= "0" && c <= "9") || c == "." || c == "-" || c == "_" || c == ":";
            if (!ok) revert BadServerName();
        }
    }

    /// @dev One direction at offset p: length, ending, revealed ranges (sorted, disjoint),
    /// commitments. Returns where it ends.
    function _direction(bytes calldata a, uint256 p, uint8 direction)
        private
        pure
        returns (Direction memory d, uint256 next)
    {
        d.len = uint64(_read(a, p, 8));
        uint256 ending = _read(a, p + 8, 2);
        // 00 00 open, 01 00 close_notify, 02 dd a fatal alert with description dd ≠ 0
        bool known = ending == 0 || ending == 0x0100 || (ending >> 8 == 2 && ending & 0xff != 0);
        if (!known) revert BadEnding(direction, bytes2(uint16(ending)));
        d.ending = uint8(ending >> 8);
        (d.revealedAt, d.revealedCount, next) = _ranges(a, p + 10, direction, d.len, true);
        (d.committedAt, d.committedCount, next) = _ranges(a, next, direction, d.len, false);
    }

    /// @dev The exchanges at offset p: 1 to 16, their requests following one another from 0 to
    /// the sent length, their responses from 0 to the received length. Returns where they end.
    function _exchanges(bytes calldata a, uint256 p, uint64 sentLen, uint64 receivedLen)
        private
        pure
        returns (uint8 count, uint256 next)
    {
        uint256 n = _read(a, p, 1);
        if (n == 0 || n > MAX_EXCHANGES) revert BadExchangeCount(n);
        count = uint8(n);
        next = p + 1 + n * EXCHANGE_BYTES;
        if (next > a.length) revert Truncated();
        uint256 requestAt;
        uint256 responseAt;
        for (uint256 q = p + 1; q < next; q += EXCHANGE_BYTES) {
            uint256 word;
            assembly {
                word := calldataload(add(a.offset, q))
            }
            uint256 requestStart = uint64(word >> 192);
            uint256 requestEnd = uint64(word >> 128);
            uint256 responseStart = uint64(word >> 64);
            uint256 responseEnd = uint64(word);
            if (requestStart != requestAt || requestEnd < requestStart) revert ExchangesNotTiling(0);
            if (responseStart != responseAt || responseEnd < responseStart) revert ExchangesNotTiling(1);
            requestAt = requestEnd;
            responseAt = responseEnd;
        }
        if (requestAt != sentLen) revert ExchangesNotTiling(0);
        if (responseAt != receivedLen) revert ExchangesNotTiling(1);
    }

    /// @dev The statements at offset p: at most 16, each naming one of the `exchangeCount`
    /// exchanges at `exchangesAt` (from 1) and a direction (0 its request, 1 its response), its
    /// value's 1 to 64 ranges sorted, disjoint and inside that request or response, then its
    /// text of 1 to 4096 bytes. Returns where they end.
    function _statements(bytes calldata a, uint256 p, uint256 exchangesAt, uint256 exchangeCount)
        private
        pure
        returns (uint8 count, uint256 next)
    {
        uint256 n = _read(a, p, 1);
        if (n > MAX_STATEMENTS) revert TooManyStatements(n);
        count = uint8(n);
        next = p + 1;
        for (uint256 i = 0; i < n; ++i) {
            uint256 e = _read(a, next, 1);
            if (e == 0 || e > exchangeCount) revert BadStatementExchange(i, uint8(e), exchangeCount);
            uint256 direction = _read(a, next + 1, 1);
            if (direction > 1) revert BadStatementDirection(i, uint8(direction));
            uint256 exchangeWord;
            assembly {
                // the exchange's 32 bytes: its request's start ‖ end the high 16, its
                // response's the low 16 (within the bounds _exchanges checked)
                exchangeWord := calldataload(add(a.offset, add(exchangesAt, add(1, mul(sub(e, 1), EXCHANGE_BYTES)))))
            }
            // the message's start ‖ end in the low 16 bytes
            uint256 message = direction == 0 ? exchangeWord >> 128 : exchangeWord;
            next = _valueRanges(a, next + 2, i, uint8(direction), uint64(message >> 64), uint64(message));
            uint256 len = _read(a, next, 2);
            if (len == 0 || len > MAX_TEXT) revert BadStatementLength(i, len);
            next += 2 + len;
            if (next > a.length) revert Truncated();
        }
    }

    /// @dev Statement i's value ranges at offset p (their count first), each inside its
    /// exchange's request (direction 0) or response (1), [messageStart, messageEnd), each end ≤
    /// the next start. Returns where they end.
    function _valueRanges(
        bytes calldata a,
        uint256 p,
        uint256 i,
        uint8 direction,
        uint64 messageStart,
        uint64 messageEnd
    ) private pure returns (uint256 next) {
        uint256 k = _read(a, p, 1);
        if (k == 0 || k > MAX_VALUE_RANGES) revert BadValueRangeCount(i, k);
        next = p + 1 + k * VALUE_RANGE_BYTES;
        if (next > a.length) revert Truncated();
        uint64 previousEnd;
        for (uint256 q = p + 1; q < next; q += VALUE_RANGE_BYTES) {
            uint256 word;
            assembly {
                word := calldataload(add(a.offset, q))
            }
            uint64 start = uint64(word >> 192);
            uint64 end = uint64(word >> 128);
            if (start >= end || start < messageStart || end > messageEnd) {
                revert ValueOutsideMessage(i, direction, start, end);
            }
            if (start < previousEnd) revert ValueRangesOutOfOrder(i);
            previousEnd = end;
        }
    }

    /// @dev A counted list of ranges at offset p, each with start < end ≤ len; if `sorted`,
    /// each end ≤ the next start (checked after the bounds, as the Rust decoder does).
    function _ranges(bytes calldata a, uint256 p, uint8 direction, uint64 len, bool sorted)
        private
        pure
        returns (uint256 pos, uint256 count, uint256 next)
    {
        count = _read(a, p, 2);
        if (count > MAX_RANGES) revert TooManyRanges(direction, count);
        pos = p + 2;
        next = pos + count * RANGE_BYTES;
        if (next > a.length) revert Truncated();
        bool outOfOrder;
        uint256 previousEnd;
        for (uint256 q = pos; q < next; q += RANGE_BYTES) {
            uint256 word;
            assembly {
                word := calldataload(add(a.offset, q))
            }
            uint64 start = uint64(word >> 192);
            uint64 end = uint64(word >> 128);
            if (start >= end || end > len) revert RangeOutsideTranscript(direction, start, end, len);
            if (start < previousEnd) outOfOrder = true;
            previousEnd = end;
        }
        if (sorted && outOfOrder) revert RangesOutOfOrder(direction);
    }

    /// @dev The big-endian unsigned integer of `size` (1 to 32) bytes at `pos`.
    function _read(bytes calldata a, uint256 pos, uint256 size) private pure returns (uint256 v) {
        if (pos + size > a.length) revert Truncated();
        assembly {
            v := shr(sub(256, shl(3, size)), calldataload(add(a.offset, pos)))
        }
    }
}
