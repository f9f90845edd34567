// Compiled code freed while the JVM runs, for jitrace's HotSpot tests: Hot is loaded three
// times by its own class loader, run until compiled, and unloaded by a GC each time.
// Usage: java Unload DIR   (DIR holds Hot.class; prints "unload done")
import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;

public class Unload {
	public static void main(String[] args) throws Exception {
		URL dir = new File(args[0]).toURI().toURL();

		for (int round = 0; round < 3; round++) {
			// no parent: Hot is this loader's own class, unloaded with it
			URLClassLoader loader = new URLClassLoader(new URL[] { dir }, null);
			Class<?> hot = loader.loadClass("Hot");

			hot.getMethod("main", String[].class).invoke(null, (Object)new String[] { "0.6" });
			loader.close();
			hot = null;
			loader = null;
			System.gc();
			Thread.sleep(200);
			System.gc();
		}
		System.out.println("unload done");
	}
}
