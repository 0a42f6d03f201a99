// One keyed file for bench/keyed.sh: added to the no-key bench corpus, it makes the
// project "use idempotency keys", so the prefilter has demand to follow.
package bench.keyed

import java.util.UUID
import kotlinx.coroutines.delay
import okhttp3.OkHttpClient
import okhttp3.Request

class PaymentClient(private val http: OkHttpClient) {
    suspend fun <T> withRetry(times: Int, block: suspend () -> T): T {
        repeat(times - 1) {
            try { return block() } catch (e: Exception) { delay(100) }
        }
        return block()
    }

    fun newKey(): String = UUID.randomUUID().toString()

    suspend fun pay(amount: Long) = withRetry(3) {
        val request = Request.Builder()
            .url("https://api.example.com/payments?amount=$amount")
            .header("Idempotency-Key", newKey())
            .build()
        http.newCall(request).execute()
    }
}
