package shop.payments

import okhttp3.MediaType.Companion.toMediaType
import okhttp3.OkHttpClient
import okhttp3.Request
import okhttp3.RequestBody.Companion.toRequestBody

// Fixed twin: the caller derives the key from the operation (order id) once;
// the interceptor only forwards what the request already carries.
val paymentsHttpFixed: OkHttpClient = OkHttpClient.Builder().build()

fun chargeRequest(orderId: String, json: String): Request =
    Request.Builder()
        .url("https://api.example.com/v1/charges")
        .header("Idempotency-Key", "order-$orderId")
        .post(json.toRequestBody("application/json".toMediaType()))
        .build()
