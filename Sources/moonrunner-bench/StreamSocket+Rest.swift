import Reactor

extension StreamSocket {
    /// Writes as much as the socket takes of `bytes` from `offset` on: the step of every loop here that writes a
    /// buffer out in pieces.
    func write(_ bytes: [UInt8], from offset: Int) throws(IOError) -> IOResult<Int> {
        // `withUnsafeBytes` rethrows untyped: carry the typed error out in a Result.
        let result = bytes.withUnsafeBytes { all in
            Result { () throws(IOError) -> IOResult<Int> in try write(UnsafeRawBufferPointer(rebasing: all[offset...])) }
        }
        return try result.get()
    }
}
