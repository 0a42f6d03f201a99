package shop.payments

import java.util.UUID
import okhttp3.OkHttpClient

// Defect: a network interceptor runs once per physical attempt (OkHttp's own
// connection retries and redirects included), so each attempt gets a new key.
val paymentsHttp: OkHttpClient = OkHttpClient.Builder()
    .addNetworkInterceptor { chain ->
        val request = chain.request().newBuilder()
            .header("Idempotency-Key", UUID.randomUUID().toString())
            .build()
        chain.proceed(request)
    }
    .build()
